#!/usr/bin/perl
# pkt_tap.pl IFINDEX SECONDS
#
# Reads the IPv6 packets that arrive on interface IFINDEX for SECONDS
# seconds through a plain AF_PACKET socket (no ring) and prints the
# destination address of each, one per line. Such a socket is the classic
# tap: for every packet it queues a clone that shares the packet's data,
# so the stack sees skbs whose headers are shared and must copy them
# before writing; a translation that wrote into the shared data would show
# here as a translated destination. Packets the host sends out of the
# interface are skipped. Prints "ready" on stderr once the socket is open.
# Needs CAP_NET_RAW. Perl core only (perl-base).
use strict;
use warnings;
use Socket qw(AF_INET6 inet_ntop);
use IO::Handle;

@ARGV == 2 or die "usage: pkt_tap.pl IFINDEX SECONDS\n";
my ($ifindex, $secs) = @ARGV;
$ifindex =~ /^\d+$/ && $secs =~ /^\d+$/ or die "pkt_tap.pl: IFINDEX and SECONDS are numbers\n";

use constant {
	AF_PACKET	=> 17,
	SOCK_RAW	=> 3,
	ETH_P_IPV6	=> 0x86dd,
	PACKET_OUTGOING	=> 4,
	ETH_HLEN	=> 14,
};

socket(my $s, AF_PACKET, SOCK_RAW, unpack('S', pack('n', ETH_P_IPV6)))
	or die "pkt_tap.pl: socket: $!\n";
# struct sockaddr_ll: family, protocol (big-endian), ifindex, hatype,
# pkttype, halen, addr[8]
bind($s, pack('S n i S C C a8', AF_PACKET, ETH_P_IPV6, $ifindex, 0, 0, 0, ''))
	or die "pkt_tap.pl: bind to ifindex $ifindex: $!\n";
STDOUT->autoflush(1);
print STDERR "ready\n";

my $end = time + $secs;
while ((my $left = $end - time) > 0) {
	my $rin = '';
	vec($rin, fileno($s), 1) = 1;
	next unless select(my $rout = $rin, undef, undef, $left) > 0;
	my $from = recv($s, my $buf, 65535, 0);
	defined $from or die "pkt_tap.pl: recv: $!\n";
	my (undef, undef, undef, undef, $pkttype) = unpack('S n i S C', $from);
	next if $pkttype == PACKET_OUTGOING;
	next if length($buf) < ETH_HLEN + 40;
	print inet_ntop(AF_INET6, substr($buf, ETH_HLEN + 24, 16)), "\n";
}
