#!/usr/bin/perl
# rtc_flows.pl PKTS DST... : UDP flows to port 5000 of every DST (IPv4 or
# IPv6) until killed: per round and DST, PKTS datagrams from a new source
# port (a new connection) and one from a socket kept for the whole run (a
# connection that lasts while its conntrack does).
# Send errors (no route, the interface gone for a while) are ignored: the
# flows go on whenever the path is back. Flow label 0 (no automatic label),
# so every packet of a flow has the same routing inputs. Perl core only.
use strict;
use warnings;
use Socket qw(AF_INET AF_INET6 SOCK_DGRAM IPPROTO_IPV6 inet_pton
	pack_sockaddr_in pack_sockaddr_in6);

@ARGV >= 2 or die "usage: rtc_flows.pl PKTS DST...\n";
my ($pkts, @dst) = @ARGV;
my $IPV6_AUTOFLOWLABEL = 70;
my @to = map {
	/:/ ? [AF_INET6, pack_sockaddr_in6(5000, inet_pton(AF_INET6, $_))]
	    : [AF_INET, pack_sockaddr_in(5000, inet_pton(AF_INET, $_))]
} @dst;
sub udp {
	socket(my $s, $_[0], SOCK_DGRAM, 0) or die "rtc_flows.pl: socket: $!\n";
	setsockopt($s, IPPROTO_IPV6, $IPV6_AUTOFLOWLABEL, 0) if $_[0] == AF_INET6;
	return $s;
}
my @keep = map { udp($_->[0]) } @to;
while (1) {
	for my $i (0 .. $#to) {
		my $t = $to[$i];
		# a new socket: a new ephemeral source port, a new connection
		my $s = udp($t->[0]);
		send($s, "z" x 32, 0, $t->[1]) for 1 .. $pkts;
		send($keep[$i], "k" x 32, 0, $t->[1]);
	}
	select(undef, undef, undef, 0.005);
}
