#!/usr/bin/perl
# nl_dump_hold.pl MAP
#
# Starts an entry dump of ILA map MAP (generic netlink family ILA_MAP,
# GETENTRY with NLM_F_DUMP), reads its first answer and then holds the dump
# open without reading on: the kernel keeps the dump's state until the
# socket closes. Prints "held N" (N: messages in the first answer) on
# stdout once the dump is under way, "refused ERRNO" if the kernel refused
# it, then sleeps until killed. What a slow or hostile reader does to a
# map that is swapped, flushed or destroyed meanwhile. Perl core only.
use strict;
use warnings;
use Socket;
use IO::Handle;

@ARGV == 1 or die "usage: nl_dump_hold.pl MAP\n";
my $map = $ARGV[0];
STDOUT->autoflush(1);

use constant {
	AF_NETLINK		=> 16,
	NETLINK_GENERIC		=> 16,
	NLM_F_REQUEST		=> 1,
	NLM_F_ACK		=> 4,
	NLM_F_DUMP		=> 0x300,
	NLMSG_ERROR		=> 2,
	NLMSG_DONE		=> 3,
	GENL_ID_CTRL		=> 0x10,
	CTRL_CMD_GETFAMILY	=> 3,
	CTRL_ATTR_FAMILY_ID	=> 1,
	CTRL_ATTR_FAMILY_NAME	=> 2,
	ILA_MAP_CMD_GETENTRY	=> 7,
	ILA_MAP_A_NAME		=> 2,
};

sub attr { my ($type, $data) = @_;
	my $len = 4 + length($data);
	return pack('SS', $len, $type) . $data . ("\0" x ((4 - $len % 4) % 4));
}
sub msg { my ($type, $flags, $seq, $cmd, $version, $attrs) = @_;
	my $payload = pack('CCS', $cmd, $version, 0) . $attrs;
	return pack('LSSLL', 16 + length($payload), $type, $flags, $seq, 0) . $payload;
}

socket(my $s, AF_NETLINK, SOCK_RAW, NETLINK_GENERIC) or die "socket: $!\n";
bind($s, pack('SSLL', AF_NETLINK, 0, 0, 0)) or die "bind: $!\n";

# the family id of ILA_MAP
send($s, msg(GENL_ID_CTRL, NLM_F_REQUEST, 1, CTRL_CMD_GETFAMILY, 1,
	     attr(CTRL_ATTR_FAMILY_NAME, "ILA_MAP\0")), 0) or die "send: $!\n";
my $buf;
defined recv($s, $buf, 65536, 0) or die "recv: $!\n";
my ($len, $type) = unpack('LS', $buf);
die "ILA_MAP: no such family (nf_ila not loaded?)\n" if $type == NLMSG_ERROR;
my $family;
for (my $off = 20; $off + 4 <= $len; ) {
	my ($alen, $atype) = unpack("x$off SS", $buf);
	last if $alen < 4;
	$family = unpack('x' . ($off + 4) . ' S', $buf) if $atype == CTRL_ATTR_FAMILY_ID;
	$off += ($alen + 3) & ~3;
}
defined $family or die "ILA_MAP: no family id in the answer\n";

send($s, msg($family, NLM_F_REQUEST | NLM_F_DUMP, 2, ILA_MAP_CMD_GETENTRY, 1,
	     attr(ILA_MAP_A_NAME, "$map\0")), 0) or die "send: $!\n";
defined recv($s, $buf, 65536, 0) or die "recv: $!\n";
my $n = 0;
for (my $off = 0; $off + 16 <= length($buf); ) {
	my ($mlen, $mtype) = unpack("x$off LS", $buf);
	last if $mlen < 16;
	if ($mtype == NLMSG_ERROR) {
		my $err = unpack('x' . ($off + 16) . ' l', $buf);
		print "refused ", -$err, "\n";
		sleep;
	}
	$n++ unless $mtype == NLMSG_DONE;
	$off += ($mlen + 3) & ~3;
}
print "held $n\n";
sleep;
