// SPDX-License-Identifier: GPL-2.0
// ila_stress --traffic: packets through the ILA rules and hooks while the
// netlink side churns. UDP to SIR addresses (identifiers 1..N, most of
// them in the maps, some not), some large enough to be fragmented, TCP
// SYNs, and ICMPv6 errors quoting a SIR address (whole, truncated or
// garbled), at a bounded rate. Send errors (no route, a hook dropping)
// are counted, not failures.
#include <arpa/inet.h>
#include <endian.h>
#include <fcntl.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <netinet/ip6.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "engine.h"

namespace stress {

namespace {

void traffic_usage()
{
	std::puts("usage: ila_stress --traffic --sir PREFIX:: [--sir PREFIX::]... --server ADDR [--src ADDR]\n"
		  "                  [--secs S] [--seed N] [--idents N] [--pps N]\n"
		  "Sends UDP, TCP SYNs and ICMPv6 errors to PREFIX::IDENT (IDENT 1..N, or random) and to ADDR.");
}

in6_addr addr_with(const in6_addr &pfx, std::uint64_t ident)
{
	in6_addr a = pfx;
	std::uint64_t be = htobe64(ident);
	std::memcpy(a.s6_addr + 8, &be, 8);
	return a;
}

} // namespace

int run_traffic(int argc, char **argv)
{
	std::vector<std::string> sir_s;
	std::string server_s, src_s = "::";
	std::uint64_t seed = 0, secs = 30, idents = 64, pps = 2000;
	if (const char *s = std::getenv("STRESS_SEED"))
		seed = std::strtoull(s, nullptr, 0);
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		if (a == "-h" || a == "--help") {
			traffic_usage();
			return 0;
		}
		if (i + 1 >= argc) {
			std::fprintf(stderr, "ila_stress --traffic: %s needs a value\n", a.c_str());
			return 2;
		}
		const char *v = argv[++i];
		if (a == "--sir")
			sir_s.push_back(v);
		else if (a == "--server")
			server_s = v;
		else if (a == "--src")
			src_s = v;
		else if (a == "--secs")
			secs = std::strtoull(v, nullptr, 0);
		else if (a == "--seed")
			seed = std::strtoull(v, nullptr, 0);
		else if (a == "--idents")
			idents = std::max<std::uint64_t>(1, std::strtoull(v, nullptr, 0));
		else if (a == "--pps")
			pps = std::max<std::uint64_t>(1, std::strtoull(v, nullptr, 0));
		else {
			std::fprintf(stderr, "ila_stress --traffic: unknown option %s\n", a.c_str());
			return 2;
		}
	}
	std::vector<in6_addr> sirs;
	in6_addr server{}, src{};
	for (const auto &x : sir_s) {
		in6_addr a{};
		if (inet_pton(AF_INET6, x.c_str(), &a) != 1)
			sirs.clear();
		else
			sirs.push_back(a);
	}
	if (sirs.empty() || sirs.size() != sir_s.size() || inet_pton(AF_INET6, server_s.c_str(), &server) != 1 ||
	    inet_pton(AF_INET6, src_s.c_str(), &src) != 1) {
		std::fprintf(stderr, "ila_stress --traffic: --sir, --server and --src need IPv6 addresses\n");
		return 2;
	}
	Rng rng(seed_for(seed, "traffic"));
	std::printf("traffic: seed %llu, %llu s, to %zu prefixes, identifiers 1..%llu\n", (unsigned long long)seed,
		    (unsigned long long)secs, sirs.size(), (unsigned long long)idents);
	std::fflush(stdout);

	int udp = socket(AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int icmp = socket(AF_INET6, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_ICMPV6);
	if (udp < 0) {
		std::perror("traffic: UDP socket");
		return 1;
	}
	std::map<std::string, std::uint64_t> sent, errs;
	auto count_err = [&](const char *what) {
		const char *n = strerrorname_np(errno);
		errs[std::string(what) + " " + (n ? n : "?")]++;
	};
	std::uint8_t buf[4096];
	const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(secs);
	const auto pause = std::chrono::microseconds(32 * 1000000 / pps);
	for (std::uint64_t n = 0; std::chrono::steady_clock::now() < end; n++) {
		if (n % 32 == 31)
			std::this_thread::sleep_for(pause);
		const std::uint64_t ident =
			rng.chance(85) ? std::uint64_t(rng.range(1, std::int64_t(idents))) : rng.next();
		const in6_addr &sir = sirs[rng.below(sirs.size())];
		sockaddr_in6 to{};
		to.sin6_family = AF_INET6;
		to.sin6_addr = addr_with(sir, ident);
		to.sin6_port = htons(std::uint16_t(rng.range(1024, 65535)));
		const unsigned r = unsigned(rng.below(100));
		if (r < 80) {
			std::size_t len = rng.chance(90) ? rng.below(200) : rng.chance(80) ? rng.range(1000, 1400)
											   : rng.range(1500, 4000);
			for (std::size_t i = 0; i < len && i < sizeof(buf); i++)
				buf[i] = std::uint8_t(rng.next());
			if (sendto(udp, buf, std::min(len, sizeof(buf)), 0, reinterpret_cast<sockaddr *>(&to),
				   sizeof(to)) < 0)
				count_err("udp");
			else
				sent[len > 1400 ? "udp fragmented" : "udp"]++;
		} else if (r < 85) {
			int t = socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
			if (t >= 0) {
				if (connect(t, reinterpret_cast<sockaddr *>(&to), sizeof(to)) < 0 && errno != EINPROGRESS)
					count_err("tcp");
				else
					sent["tcp syn"]++;
				close(t);
			}
		} else if (icmp >= 0) {
			// an ICMPv6 error quoting a packet to a SIR address: to that
			// address (the outer header is translated) or to the server
			// (only the quoted one is in the prefix)
			std::memset(buf, 0, 8 + 48);
			buf[0] = std::uint8_t(rng.pick(std::vector<int>{ICMP6_DST_UNREACH, ICMP6_PACKET_TOO_BIG,
									  ICMP6_TIME_EXCEEDED, ICMP6_PARAM_PROB}));
			buf[1] = std::uint8_t(rng.below(8));
			std::uint32_t mtu = htonl(std::uint32_t(rng.range(1280, 1500)));
			std::memcpy(buf + 4, &mtu, 4);
			ip6_hdr q{};
			q.ip6_flow = htonl(0x60000000u);
			q.ip6_plen = htons(std::uint16_t(8 + rng.below(100)));
			q.ip6_nxt = std::uint8_t(rng.chance(80)	  ? int(IPPROTO_UDP)
						 : rng.chance(50) ? int(IPPROTO_TCP)
								  : int(IPPROTO_ICMPV6));
			q.ip6_hlim = 64;
			q.ip6_src = src;
			q.ip6_dst = addr_with(sir, rng.chance(85) ? ident : rng.next());
			std::memcpy(buf + 8, &q, sizeof(q));
			for (int i = 0; i < 8; i++)
				buf[8 + 40 + i] = std::uint8_t(rng.next());
			std::size_t len = 8 + 48;
			if (rng.chance(20))
				len = 8 + rng.below(48); // a truncated quote
			sockaddr_in6 dst{};
			dst.sin6_family = AF_INET6;
			dst.sin6_addr = rng.chance(50) ? to.sin6_addr : server;
			if (sendto(icmp, buf, len, 0, reinterpret_cast<sockaddr *>(&dst), sizeof(dst)) < 0)
				count_err("icmpv6");
			else
				sent["icmpv6 error"]++;
		}
	}
	close(udp);
	if (icmp >= 0)
		close(icmp);
	std::string s = "traffic: sent";
	for (const auto &[k, v] : sent)
		s += " " + k + " " + std::to_string(v) + ",";
	s += " send errors:";
	for (const auto &[k, v] : errs)
		s += " " + k + " " + std::to_string(v);
	std::puts(s.c_str());
	return 0;
}

} // namespace stress
