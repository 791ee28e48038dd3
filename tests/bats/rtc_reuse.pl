#!/usr/bin/perl
# rtc_reuse.pl ROUTER_NS CLIENT_NS SRC4 DST4 SRC6 DST6 PORT ATTEMPTS
#
# The trigger of an nf_conn recycled across families, from the network
# (tests/bats/rtcache.bats). Per attempt, with source port PORT + attempt:
#   1. an IPv4 UDP flow SRC4 -> DST4:5000, 3 datagrams: the router caches
#      its route (packet 2 recorded, packet 3 a hit);
#   2. its conntrack deleted on the router (ctnetlink, by tuple): the
#      nf_conn goes back to the slab cache, the rtcache entry stays until
#      the reclaim worker's next pass;
#   3. at once, an IPv6 UDP flow SRC6 -> DST6:5000 from the same port,
#      flow label 0, on the same interface: its new nf_conn is most often
#      the object just freed (the slab hands out the last freed object
#      first), so the rtcache lookup of its packet 2 finds the IPv4 entry.
#      SRC6/DST6 are SRC4/DST4 as a.b.c.d:: (the IPv4 key's address bytes
#      followed by zeros).
# The object was reused if packet 2 found that entry: it is either served
# from it (hits grows: the bug, an IPv4 route on an IPv6 packet) or
# records over it (stale grows: an entry of another connection replaced).
# Then IPv6 packets 3..5 are sent. Stops at the first attempt with a reuse.
# Prints per attempt "attempt N port P reused R hit2 H", where H is the
# number of hits packet 2 got (0 unless the cache served a wrong route).
# Everything runs in this one process pinned to one CPU (run it under
# taskset), so the free and the new allocation happen on the same CPU
# microseconds apart. Needs CAP_NET_ADMIN, CAP_SYS_ADMIN (setns). Perl core.
use strict;
use warnings;
use Socket qw(AF_INET AF_INET6 SOCK_DGRAM SOCK_RAW SOL_SOCKET SO_REUSEADDR
	IPPROTO_IPV6 inet_pton pack_sockaddr_in pack_sockaddr_in6);

@ARGV == 8 or die "usage: rtc_reuse.pl ROUTER_NS CLIENT_NS SRC4 DST4 SRC6 DST6 PORT ATTEMPTS\n";
my ($rns, $cns, $src4, $dst4, $src6, $dst6, $port0, $attempts) = @ARGV;

my $SYS_setns = 308;		# x86_64
my $CLONE_NEWNET = 0x40000000;
my $NETLINK_NETFILTER = 12;
my $IPV6_AUTOFLOWLABEL = 70;

sub enter {
	my $path = "/run/netns/$_[0]";
	open(my $fh, '<', $path) or die "rtc_reuse.pl: $path: $!\n";
	syscall($SYS_setns, fileno($fh), $CLONE_NEWNET) == 0 or die "rtc_reuse.pl: setns $path: $!\n";
}

# Router statistics (this process is in the router netns when it reads).
sub stats {
	open(my $fh, '<', '/proc/net/stat/nf_conntrack_rtcache') or die "rtc_reuse.pl: stat file: $!\n";
	my @names = split ' ', scalar <$fh>;
	my %sum;
	while (my $l = <$fh>) {
		my @v = split ' ', $l;
		$sum{$names[$_]} += hex $v[$_] for 1 .. $#names;
	}
	return \%sum;
}

sub wait_for {
	my ($what, $cond) = @_;
	for (1 .. 600) {
		return if $cond->();
		select(undef, undef, undef, 0.05);
	}
	die "rtc_reuse.pl: timed out waiting for $what\n";
}

sub nla { my ($type, $data) = @_; my $l = 4 + length $data; return pack('vv', $l, $type) . $data . "\0" x ((4 - $l % 4) % 4) }
sub nest { return nla($_[0] | 0x8000, join '', @_[1 .. $#_]) }

# IPCTNL_MSG_CT_DELETE of the IPv4 UDP connection SRC4:sport -> DST4:5000.
sub ct_delete {
	my ($nl, $sport) = @_;
	my $tuple = nest(1,			# CTA_TUPLE_ORIG
		nest(1,				# CTA_TUPLE_IP
			nla(1, inet_pton(AF_INET, $src4)),	# CTA_IP_V4_SRC
			nla(2, inet_pton(AF_INET, $dst4))),	# CTA_IP_V4_DST
		nest(2,				# CTA_TUPLE_PROTO
			nla(1, pack('C', 17)),		# CTA_PROTO_NUM
			nla(2, pack('n', $sport)),	# CTA_PROTO_SRC_PORT
			nla(3, pack('n', 5000))));	# CTA_PROTO_DST_PORT
	my $body = pack('CCn', AF_INET, 0, 0) . $tuple;	# nfgenmsg
	# NFNL_SUBSYS_CTNETLINK << 8 | IPCTNL_MSG_CT_DELETE, NLM_F_REQUEST | NLM_F_ACK
	my $msg = pack('VvvVV', 16 + length $body, 0x0102, 0x5, 1, 0) . $body;
	send($nl, $msg, 0) or die "rtc_reuse.pl: netlink send: $!\n";
	recv($nl, my $ack, 4096, 0) // die "rtc_reuse.pl: netlink recv: $!\n";
	my $err = unpack('l<', substr($ack, 16, 4));
	$err == 0 or die "rtc_reuse.pl: conntrack delete: error $err\n";
}

# Sockets are created in the client netns, the netlink socket in the router's.
enter($cns);
my @s4;
my @s6;
for my $i (0 .. $attempts - 1) {
	my $p = $port0 + $i;
	socket(my $a, AF_INET, SOCK_DGRAM, 0) or die "rtc_reuse.pl: socket: $!\n";
	setsockopt($a, SOL_SOCKET, SO_REUSEADDR, 1);
	bind($a, pack_sockaddr_in($p, inet_pton(AF_INET, $src4))) or die "rtc_reuse.pl: bind $src4:$p: $!\n";
	socket(my $b, AF_INET6, SOCK_DGRAM, 0) or die "rtc_reuse.pl: socket6: $!\n";
	setsockopt($b, SOL_SOCKET, SO_REUSEADDR, 1);
	setsockopt($b, IPPROTO_IPV6, $IPV6_AUTOFLOWLABEL, 0) or die "rtc_reuse.pl: IPV6_AUTOFLOWLABEL: $!\n";
	bind($b, pack_sockaddr_in6($p, inet_pton(AF_INET6, $src6))) or die "rtc_reuse.pl: bind [$src6]:$p: $!\n";
	push @s4, $a;
	push @s6, $b;
}
my $to4 = pack_sockaddr_in(5000, inet_pton(AF_INET, $dst4));
my $to6 = pack_sockaddr_in6(5000, inet_pton(AF_INET6, $dst6));
enter($rns);
socket(my $nl, 16, SOCK_RAW, $NETLINK_NETFILTER) or die "rtc_reuse.pl: netlink socket: $!\n";
$| = 1;

for my $i (0 .. $attempts - 1) {
	my $p = $port0 + $i;
	my $s0 = stats();
	send($s4[$i], "x" x 32, 0, $to4) for 1 .. 3;
	wait_for("the IPv4 flow to be cached", sub {
		my $s = stats();
		$s->{inserts} > $s0->{inserts} && $s->{hits} > $s0->{hits};
	});
	my $s1 = stats();
	ct_delete($nl, $p);
	send($s6[$i], "y" x 32, 0, $to6) for 1 .. 2;
	# packet 2 of the IPv6 flow was looked up: a hit or a miss
	wait_for("the IPv6 flow's second packet", sub {
		my $s = stats();
		$s->{hits} + $s->{misses} > $s1->{hits} + $s1->{misses};
	});
	my $s2 = stats();
	my $hit2 = $s2->{hits} - $s1->{hits};
	my $reused = ($hit2 > 0 || $s2->{stale} > $s1->{stale}) ? 1 : 0;
	send($s6[$i], "y" x 32, 0, $to6) for 3 .. 5;
	print "attempt ", $i + 1, " port $p reused $reused hit2 $hit2\n";
	last if $reused;
}
