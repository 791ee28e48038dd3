#!/usr/bin/perl
# icmp6_err_raw.pl SRC DST QSRC QDST [HOME]
#
# Sends one hand-built ICMPv6 Destination Unreachable (port unreachable)
# from SRC to DST, quoting an IPv6/UDP packet from QSRC to QDST (payload
# "ila-quote-test"), from a raw socket (IPPROTO_RAW: every header is ours).
# With HOME, the quoted packet has a Destination Options header with a
# Home Address option (RFC 6275 6.3) between its IPv6 and UDP headers, and
# its UDP checksum is computed over HOME as the pseudo-header's source, as
# a mobile node's packet is. With ICMP6_OUTER_DSTOPT=1 in the environment,
# the error itself carries a Destination Options header (PadN only) between
# its IPv6 and ICMPv6 headers. Prints the quoted UDP checksum field (4 hex
# digits, as tcpdump -x shows). Needs CAP_NET_RAW. Perl core only.
use strict;
use warnings;
use Socket qw(AF_INET6 inet_pton pack_sockaddr_in6);

@ARGV == 4 || @ARGV == 5 or die "usage: icmp6_err_raw.pl SRC DST QSRC QDST [HOME]\n";
my ($src, $dst, $qsrc, $qdst, $home) = @ARGV;
my %a;
for my $n (grep { defined } $src, $dst, $qsrc, $qdst, $home) {
	$a{$n} = inet_pton(AF_INET6, $n) or die "icmp6_err_raw.pl: not an IPv6 address: $n\n";
}

sub fold {
	my $b = shift;
	my $s = 0;
	$b .= "\0" if length($b) % 2;
	$s += $_ for unpack 'n*', $b;
	$s = ($s & 0xffff) + ($s >> 16) while $s >> 16;
	return $s;
}
# the checksum of an upper-layer packet over the IPv6 pseudo-header
sub l4sum {
	my ($from, $to, $proto, $data) = @_;
	my $ck = 0xffff & ~fold($from . $to . pack('NxxxC', length $data, $proto) . $data);
	return $ck == 0 ? 0xffff : $ck;
}

# the quoted packet
my $payload = 'ila-quote-test';
my $ulen = 8 + length $payload;
my $udp0 = pack('nnnn', 5700, 5701, $ulen, 0) . $payload;
my $qck = l4sum(defined $home ? $a{$home} : $a{$qsrc}, $a{$qdst}, 17, $udp0);
my $udp = pack('nnnn', 5700, 5701, $ulen, $qck) . $payload;
my ($nh, $ext) = (17, '');
if (defined $home) {
	# next header UDP, length 2 (24 bytes): Pad1 Pad1 PadN(0) HAO at 8n+6
	$ext = pack('CC', 17, 2) . "\0\0" . pack('CC', 1, 0) . pack('CC', 201, 16) . $a{$home};
	$nh = 60;
}
my $quoted = pack('NnCC', 6 << 28, length($ext) + $ulen, $nh, 64) .
	     $a{$qsrc} . $a{$qdst} . $ext . $udp;

# the error: type 1 (destination unreachable), code 4 (port unreachable)
my $icmp0 = pack('CCnN', 1, 4, 0, 0) . $quoted;
my $icmp = pack('CCnN', 1, 4, l4sum($a{$src}, $a{$dst}, 58, $icmp0), 0) . $quoted;
my ($onh, $oext) = (58, '');
if ($ENV{ICMP6_OUTER_DSTOPT}) {
	# next header ICMPv6, length 0 (8 bytes): PadN with 4 bytes of padding
	$oext = pack('CCCC', 58, 0, 1, 4) . "\0\0\0\0";
	$onh = 60;
}
my $pkt = pack('NnCC', 6 << 28, length($oext) + length $icmp, $onh, 64) .
	  $a{$src} . $a{$dst} . $oext . $icmp;

socket(my $s, AF_INET6, 3, 255) or die "icmp6_err_raw.pl: raw socket: $!\n";
send($s, $pkt, 0, pack_sockaddr_in6(0, $a{$dst})) == length $pkt or die "icmp6_err_raw.pl: send: $!\n";
printf "%04x\n", $qck;
