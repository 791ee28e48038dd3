// SPDX-License-Identifier: GPL-2.0
// ila_syncd_bench - the load generator and probe of `make bench` (fleet
// table): moves identifiers in etcd at a fixed rate and times each move
// until the kernel map of every router given has it (the map's "events"
// netlink group reports the daemon's replace), so the latency is from the
// put request to the map, on each router. Built, not installed.
//
//   ila_syncd_bench --endpoints URL[,URL] --prefix P --map NAME --netns NS[,NS...]
//                   [--rate 1000] [--count 10000] [--idents 1000] [--workers 8] [--batch 1]
//
// Move i puts identifier (i mod IDENTS) to the locator 2001:db8:X:Y that
// encodes i, so each event names its move. --batch K (1-128: etcd's
// default limit of operations per transaction) puts K consecutive moves in
// one transaction, due when its first move is (an orchestrator moving
// several identifiers at once); latency is counted per move. Prints one
// line per router and one for all: "latency NS p50_ms p90_ms p99_ms max_ms
// seen/count", then "rate sent_per_s".
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "etcd_client.h"
#include "ila_map_client.h"
#include "netns.h"
#include "options.h"
#include "schema.h"

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0, Clock::time_point t)
{
	return std::chrono::duration<double>(t - t0).count();
}

std::vector<std::string> split(const std::string &s)
{
	std::vector<std::string> out;
	std::size_t pos = 0;
	while (pos <= s.size()) {
		std::size_t c = s.find(',', pos);
		out.push_back(s.substr(pos, c == std::string::npos ? std::string::npos : c - pos));
		pos = c == std::string::npos ? s.size() + 1 : c + 1;
	}
	return out;
}

double percentile(std::vector<double> v, double p)
{
	if (v.empty())
		return 0;
	std::sort(v.begin(), v.end());
	std::size_t i = std::size_t(p * double(v.size() - 1) + 0.5);
	return v[std::min(i, v.size() - 1)];
}

} // namespace

int main(int argc, char **argv)
{
	std::string endpoints, prefix, map, netns;
	double rate = 1000;
	std::size_t count = 10000, idents = 1000, workers = 8, batch = 1;
	for (int i = 1; i + 1 < argc; i += 2) {
		std::string o = argv[i], v = argv[i + 1];
		if (o == "--endpoints")
			endpoints = v;
		else if (o == "--prefix")
			prefix = v;
		else if (o == "--map")
			map = v;
		else if (o == "--netns")
			netns = v;
		else if (o == "--rate")
			rate = std::stod(v);
		else if (o == "--count")
			count = std::stoul(v);
		else if (o == "--idents")
			idents = std::stoul(v);
		else if (o == "--workers")
			workers = std::stoul(v);
		else if (o == "--batch")
			batch = std::stoul(v);
		else {
			std::cerr << "ila_syncd_bench: unknown option " << o << "\n";
			return 2;
		}
	}
	if (endpoints.empty() || map.empty() || netns.empty() || rate <= 0 || !count || !idents || !workers ||
	    !batch || batch > idents || batch > 128) {
		std::cerr << "usage: ila_syncd_bench --endpoints URL[,URL] --prefix P --map NAME --netns NS[,NS...]"
			     " [--rate N] [--count N] [--idents N] [--workers N] [--batch K (1-128, <= idents)]\n";
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	syncd::Options o;
	o.endpoints = syncd::parse_endpoints(endpoints, "--endpoints");
	o.prefix = syncd::normalize_prefix(prefix);
	o.timeout = 30;
	syncd::EtcdClient etcd(o);
	etcd.set_rounds(3);

	const std::vector<std::string> nss = split(netns);
	std::vector<std::vector<double>> seen_at(nss.size(), std::vector<double>(count, -1));
	std::vector<double> sent_at(count, -1);
	std::mutex mu;
	std::atomic<std::size_t> ready{0};
	const auto t0 = Clock::now();

	// one monitor per router: NEWENTRY events of MAP, locator -> move
	std::vector<std::unique_ptr<ila::IlaMapClient>> clients;
	for (const auto &ns : nss)
		syncd::in_netns(ns, [&] { clients.push_back(std::make_unique<ila::IlaMapClient>()); });
	for (std::size_t r = 0; r < nss.size(); r++) {
		std::thread([&, r] {
			clients[r]->monitor([&] { ready++; },
					    [&, r](const ila::Command &c) {
						    if (c.map != map || (c.op != ila::Op::Replace && c.op != ila::Op::Add))
							    return true;
						    if ((c.locator >> 32) != 0x20010db8)
							    return true;
						    std::size_t i = std::size_t(c.locator & 0xffffffffULL);
						    if (i < count) {
							    std::lock_guard lock(mu);
							    if (seen_at[r][i] < 0)
								    seen_at[r][i] = since(t0, Clock::now());
						    }
						    return true;
					    },
					    [] { std::cerr << "ila_syncd_bench: events lost (receive buffer)\n"; });
		}).detach();
	}
	while (ready < nss.size())
		std::this_thread::sleep_for(std::chrono::milliseconds(10));

	// open loop: move i is due at start + i / rate; several workers so that
	// a slow commit does not hold the next moves back
	std::atomic<std::size_t> next{0};
	std::atomic<bool> failed{false};
	const auto start = Clock::now();
	auto worker = [&] {
		for (;;) {
			std::size_t first = batch * next++;
			if (first >= count || failed)
				return;
			std::size_t end = std::min(count, first + batch);
			auto due = start + std::chrono::duration_cast<Clock::duration>(
						   std::chrono::duration<double>(double(first) / rate));
			std::this_thread::sleep_until(due);
			std::vector<std::pair<std::string, std::string>> puts;
			for (std::size_t i = first; i < end; i++) {
				syncd::Mapping m{0x20010db800000000ULL | std::uint64_t(i), 0};
				puts.emplace_back(syncd::mapping_key(o.prefix, map, std::uint64_t(i % idents)),
						  syncd::format_value(m));
			}
			double t = since(t0, Clock::now());
			try {
				etcd.write_txn(puts, {});
			} catch (const std::exception &e) {
				std::cerr << "ila_syncd_bench: " << e.what() << "\n";
				failed = true;
				return;
			}
			std::lock_guard lock(mu);
			for (std::size_t i = first; i < end; i++)
				sent_at[i] = t;
		}
	};
	std::vector<std::thread> threads;
	for (std::size_t w = 0; w < workers; w++)
		threads.emplace_back(worker);
	for (auto &t : threads)
		t.join();
	const double send_secs = since(start, Clock::now());
	if (failed)
		return 1;

	// wait (at most 30 s) for the last moves to arrive everywhere
	for (int waited = 0; waited < 3000; waited++) {
		bool all = true;
		{
			std::lock_guard lock(mu);
			for (std::size_t r = 0; r < nss.size() && all; r++)
				for (std::size_t k = count > idents ? count - idents : 0; k < count && all; k++)
					all = seen_at[r][k] >= 0;
		}
		if (all)
			break;
		std::this_thread::sleep_for(std::chrono::milliseconds(10));
	}

	std::lock_guard lock(mu);
	std::vector<double> every;
	for (std::size_t r = 0; r < nss.size(); r++) {
		std::vector<double> lat;
		for (std::size_t i = 0; i < count; i++)
			if (seen_at[r][i] >= 0 && sent_at[i] >= 0)
				lat.push_back((seen_at[r][i] - sent_at[i]) * 1000);
		every.insert(every.end(), lat.begin(), lat.end());
		std::printf("latency %s %.1f %.1f %.1f %.1f %zu/%zu\n", nss[r].c_str(), percentile(lat, 0.5),
			    percentile(lat, 0.9), percentile(lat, 0.99), lat.empty() ? 0.0 : *std::max_element(lat.begin(), lat.end()),
			    lat.size(), count);
	}
	std::printf("latency all %.1f %.1f %.1f %.1f %zu/%zu\n", percentile(every, 0.5), percentile(every, 0.9),
		    percentile(every, 0.99), every.empty() ? 0.0 : *std::max_element(every.begin(), every.end()), every.size(),
		    count * nss.size());
	std::printf("rate %.1f\n", double(count) / send_secs);
	std::fflush(stdout);
	// the monitor threads sleep in recv(): end here
	_exit(0);
}
