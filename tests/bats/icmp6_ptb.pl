#!/usr/bin/perl
# icmp6_ptb.pl TO QSRC QDST MTU
#
# Sends one ICMPv6 Packet Too Big (RFC 4443 3.2) with MTU to TO, quoting an
# Echo Request from QSRC to QDST, as a router on the way from QSRC would. If
# QSRC is an address of TO's, TO learns a path MTU exception for QDST (its
# route to QDST gets "mtu MTU" in `ip -6 route show cache`). The kernel
# fills in the ICMPv6 checksum of a raw ICMPv6 socket. Needs CAP_NET_RAW.
# Perl core only (perl-base).
use strict;
use warnings;
use Socket qw(AF_INET6 SOCK_RAW inet_pton pack_sockaddr_in6);

@ARGV == 4 or die "usage: icmp6_ptb.pl TO QSRC QDST MTU\n";
my ($to, $qsrc, $qdst, $mtu) = @ARGV;
my %a;
for my $n ($to, $qsrc, $qdst) {
	$a{$n} = inet_pton(AF_INET6, $n) or die "icmp6_ptb.pl: not an IPv6 address: $n\n";
}
$mtu =~ /^\d+$/ && $mtu >= 1280 or die "icmp6_ptb.pl: MTU must be a number >= 1280: $mtu\n";

# the quoted packet: IPv6 header + an Echo Request with 1400 bytes of data
# (only its first 64 bytes are quoted; the length fields say how big it was)
my $echo = pack('CCnnn', 128, 0, 0, 0x7074, 1) . ("\0" x 56);
my $quoted = pack('NnCC', 6 << 28, 8 + 1400, 58, 64) . $a{$qsrc} . $a{$qdst} . $echo;
my $ptb = pack('CCnN', 2, 0, 0, $mtu) . $quoted;

socket(my $s, AF_INET6, SOCK_RAW, 58) or die "icmp6_ptb.pl: raw ICMPv6 socket: $!\n";
send($s, $ptb, 0, pack_sockaddr_in6(0, $a{$to})) == length $ptb or die "icmp6_ptb.pl: send: $!\n";
