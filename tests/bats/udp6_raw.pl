#!/usr/bin/perl
# udp6_raw.pl SRC DST SPORT DPORT [HOME]
#
# Sends one hand-built IPv6/UDP packet (payload "ila-hao-test") from a raw
# socket (IPPROTO_RAW: the header is ours, the kernel adds nothing). With
# HOME, a Destination Options header with a Home Address option (RFC 6275
# 6.3) sits between the IPv6 and UDP headers, and the UDP checksum is
# computed over HOME as the pseudo-header's source, as a mobile node does.
# Environment: UDP6_FLOWLABEL=N sets the flow label (default 0);
# UDP6_PADOPT=1 puts a Destination Options header holding only padding
# between the IPv6 and UDP headers (without HOME; the checksum as usual).
# Prints the UDP checksum field it sent (4 hex digits, as tcpdump -x shows).
# Needs CAP_NET_RAW. Perl core only (perl-base), so it runs everywhere.
use strict;
use warnings;
use Socket qw(AF_INET6 SOCK_RAW inet_pton pack_sockaddr_in6);

@ARGV == 4 || @ARGV == 5 or die "usage: udp6_raw.pl SRC DST SPORT DPORT [HOME]\n";
my ($src, $dst, $sport, $dport, $home) = @ARGV;
my %a;
for my $n (grep { defined } $src, $dst, $home) {
	$a{$n} = inet_pton(AF_INET6, $n) or die "udp6_raw.pl: not an IPv6 address: $n\n";
}

my $payload = 'ila-hao-test';
my $ulen = 8 + length $payload;
my $ckfold = sub {
	my $s = 0;
	my $b = shift;
	$b .= "\0" if length($b) % 2;
	$s += $_ for unpack 'n*', $b;
	$s = ($s & 0xffff) + ($s >> 16) while $s >> 16;
	return $s;
};
my $pseudo_src = defined $home ? $a{$home} : $a{$src};
my $udp0 = pack('nnnn', $sport, $dport, $ulen, 0) . $payload;
my $ck = 0xffff & ~$ckfold->($pseudo_src . $a{$dst} . pack('NxxxC', $ulen, 17) . $udp0);
$ck = 0xffff if $ck == 0;
my $udp = pack('nnnn', $sport, $dport, $ulen, $ck) . $payload;

my ($nh, $ext) = (17, '');
if (defined $home) {
	# next header UDP, length 2 (24 bytes): Pad1 Pad1 PadN(0) HAO at 8n+6
	$ext = pack('CC', 17, 2) . "\0\0" . pack('CC', 1, 0) . pack('CC', 201, 16) . $a{$home};
	$nh = 60;
} elsif ($ENV{UDP6_PADOPT}) {
	# next header UDP, length 0 (8 bytes): PadN with 4 bytes of padding
	$ext = pack('CCCC', 17, 0, 1, 4) . "\0\0\0\0";
	$nh = 60;
}
my $vtf = 6 << 28 | (($ENV{UDP6_FLOWLABEL} // 0) & 0xfffff);
my $pkt = pack('NnCC', $vtf, length($ext) + $ulen, $nh, 64) . $a{$src} . $a{$dst} . $ext . $udp;

socket(my $s, AF_INET6, SOCK_RAW, 255) or die "udp6_raw.pl: raw socket: $!\n";
send($s, $pkt, 0, pack_sockaddr_in6(0, $a{$dst})) == length $pkt or die "udp6_raw.pl: send: $!\n";
printf "%04x\n", $ck;
