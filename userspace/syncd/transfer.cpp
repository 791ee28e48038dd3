// SPDX-License-Identifier: GPL-2.0
#include "transfer.h"

#include <atomic>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>
#include <map>
#include <set>
#include <vector>

#include "command.h"
#include "etcd_client.h"
#include "ila_notation.h"
#include "plural.h"
#include "range_pager.h"
#include "schema.h"

namespace syncd {

namespace {

constexpr int kExitFail = 1;
constexpr int kExitUsage = 2;

// Every key below KEY_PREFIX, read in pages at one revision.
template <class Fn> std::int64_t for_each_key(EtcdClient &etcd, const std::string &key_prefix, std::uint32_t page_size, Fn fn)
{
	auto range = [&etcd](const std::string &k, const std::string &e, std::int64_t r, std::uint32_t limit) {
		return etcd.range(k, e, r, limit);
	};
	return read_range(range, key_prefix, prefix_range_end(key_prefix), page_size, [&](const RangePage &page) {
		for (const auto &kv : page.kvs)
			fn(kv);
	});
}

// Transactions in flight at once: etcd commits concurrent proposals
// together, so a bulk import is not one round trip per transaction.
constexpr unsigned kImportWorkers = 4;

// Writes BATCHES (one transaction each) from several threads; throws the
// first EtcdError. Returns the newest revision written.
std::int64_t write_parallel(EtcdClient &etcd, const std::vector<std::vector<std::pair<std::string, std::string>>> &batches)
{
	std::atomic<std::size_t> next{0};
	std::atomic<std::int64_t> rev{0};
	std::mutex err_mu;
	std::optional<EtcdError> err;
	auto worker = [&] {
		for (;;) {
			std::size_t i = next++;
			if (i >= batches.size())
				return;
			try {
				std::int64_t r = etcd.write_txn(batches[i], {});
				for (std::int64_t cur = rev; r > cur && !rev.compare_exchange_weak(cur, r);)
					;
			} catch (const EtcdError &e) {
				std::lock_guard lock(err_mu);
				if (!err)
					err = e;
				next = batches.size();
				return;
			}
		}
	};
	std::vector<std::thread> threads;
	for (unsigned t = 0; t < std::min<std::size_t>(kImportWorkers, batches.size()); t++)
		threads.emplace_back(worker);
	for (auto &t : threads)
		t.join();
	if (err)
		throw *err;
	return rev;
}

} // namespace

int run_import(const Options &o, const std::string &text, const std::string &src)
{
	std::map<std::string, std::string> puts; // key -> value, sorted
	std::set<std::string> maps;
	std::size_t lineno = 0, pos = 0, hooks = 0;
	while (pos < text.size()) {
		std::size_t nl = text.find('\n', pos);
		std::string_view line(text.data() + pos, (nl == std::string::npos ? text.size() : nl) - pos);
		pos = nl == std::string::npos ? text.size() : nl + 1;
		lineno++;
		auto w = ila::split_words(line);
		if (w.empty())
			continue;
		if (w[0] == "hook") {
			hooks++;
			continue;
		}
		ila::Command c;
		try {
			c = ila::parse_command(w);
		} catch (const ila::UsageError &e) {
			std::cerr << "ila-syncd: import: " << src << ":" << lineno << ": " << e.what() << "\n";
			return kExitUsage;
		}
		if (c.op != ila::Op::Create && c.op != ila::Op::Add && c.op != ila::Op::Replace) {
			std::cerr << "ila-syncd: import: " << src << ":" << lineno << ": \"" << ila::describe(c)
				  << "\": import takes what `ilactl save` writes (map create, map add)\n";
			return kExitUsage;
		}
		if (!o.map.empty() && c.map != o.map)
			continue;
		maps.insert(c.map);
		if (c.op == ila::Op::Create)
			continue;
		Mapping m{c.locator, c.csum_mode.value_or(0)};
		puts[mapping_key(o.prefix, c.map, c.ident)] = format_value(m);
	}
	if (!o.map.empty() && maps.empty())
		std::cerr << "ila-syncd: import: " << src << " has no map " << o.map << "\n";

	EtcdClient etcd(o);
	etcd.set_rounds(5);
	std::size_t txns = 0, deleted = 0;
	std::int64_t revision = 0;
	try {
		std::vector<std::vector<std::pair<std::string, std::string>>> batches(1);
		for (auto &kv : puts) {
			if (batches.back().size() == o.txn_ops)
				batches.emplace_back();
			batches.back().emplace_back(kv.first, kv.second);
		}
		if (batches.back().empty())
			batches.pop_back();
		revision = write_parallel(etcd, batches);
		txns += batches.size();
		if (o.prune) {
			std::vector<std::string> dels;
			auto flush = [&] {
				revision = std::max(revision, etcd.write_txn({}, dels));
				txns++;
				deleted += dels.size();
				dels.clear();
			};
			for (const auto &map : maps) {
				std::vector<std::string> extra;
				for_each_key(etcd, map_key_prefix(o.prefix, map), o.page_size, [&](const KeyValue &kv) {
					if (!puts.count(kv.key))
						extra.push_back(kv.key);
				});
				for (auto &k : extra) {
					dels.push_back(std::move(k));
					if (dels.size() == o.txn_ops)
						flush();
				}
			}
			if (!dels.empty())
				flush();
		}
	} catch (const EtcdError &e) {
		std::cerr << "ila-syncd: import: " << e.what() << "\n";
		return kExitFail;
	}
	std::cerr << "ila-syncd: import: " << ila::plural(puts.size(), "key") << " of " << ila::plural(maps.size(), "map")
		  << " written under " << maps_key_prefix(o.prefix) << " in " << ila::plural(txns, "transaction")
		  << (o.prune ? ", " + ila::plural(deleted, "other key") + " deleted" : "")
		  << (hooks ? ", " + ila::plural(hooks, "hook line") + " skipped" : "")
		  << (revision ? ", revision " + std::to_string(revision) : "") << "\n";
	return 0;
}

int run_export(const Options &o, std::ostream &out)
{
	EtcdClient etcd(o);
	etcd.set_rounds(5);
	const std::string base = maps_key_prefix(o.prefix);
	const std::string from = o.map.empty() ? base : map_key_prefix(o.prefix, o.map);
	std::string body, current;
	std::size_t bad = 0, n = 0;
	std::int64_t rev;
	try {
		rev = for_each_key(etcd, from, o.page_size, [&](const KeyValue &kv) {
			auto skip = [&](const std::string &why) {
				bad++;
				std::cerr << "ila-syncd: export: skipping key " << printable(kv.key) << ": " << why << "\n";
			};
			auto mk = split_map_key(std::string_view(kv.key).substr(base.size()));
			if (!mk)
				return skip(mk.error);
			auto id = parse_key_identifier(mk.value->ident_text);
			if (!id)
				return skip(id.error);
			auto m = parse_value(kv.value);
			if (!m)
				return skip(m.error);
			if (mk.value->map != current) {
				current = mk.value->map;
				body += "map create " + current + "\n";
			}
			body += "map add " + current + " " + ila::format_half(*id.value) + " " + format_value(*m.value) + "\n";
			n++;
		});
	} catch (const EtcdError &e) {
		std::cerr << "ila-syncd: export: " << e.what() << "\n";
		return kExitFail;
	}
	out << "# ila-syncd export of " << from << " at revision " << rev << ": " << n << " mappings"
	    << (bad ? ", " + std::to_string(bad) + " bad keys skipped" : "") << "\n"
	    << body;
	out.flush();
	if (!out) {
		std::cerr << "ila-syncd: export: write error on standard output\n";
		return kExitFail;
	}
	return 0;
}

} // namespace syncd
