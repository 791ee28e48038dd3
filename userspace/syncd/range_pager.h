// SPDX-License-Identifier: GPL-2.0
// Reading a key range of etcd in pages, at one revision, at a cost that
// grows with the keys read, not with their square.
//
// etcd 3.4 (Debian 12's etcd-server) answers a Range request by first
// collecting every key of [key, range_end) from its index, to count them,
// and only then applies the limit (mvcc/kvstore_txn.go rangeKeys(),
// treeIndex.Revisions()). Pages of [last key read, end of the map) each
// walk all the keys still to come: a million keys read 10,000 at a time
// cost fifty walks of the whole map. The pager bounds each request's
// range_end instead: from the keys of the page just read it estimates how
// wide (in key space) the next page of LIMIT keys is, and asks for a
// window a little wider than that, so each request walks about one page.
// The estimate only decides the cost: windows are contiguous and every
// key of [begin, end) is read exactly once, in order, whatever the keys.
// Key space is measured on the alphabet of the schema's keys (hex digits
// and ':', other bytes grouped around them), where canonical identifiers
// spread about evenly; the count etcd returns with each answer corrects
// the next window's width. Pure logic (no etcd): unit-tested on the host
// with a model of the walk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <future>
#include <string>
#include <string_view>
#include <type_traits>

namespace syncd {

class RangePager {
public:
	// Keys [BEGIN, END) (END "\0": to the end of the key space), pages of
	// at most LIMIT keys.
	RangePager(std::string begin, std::string end, std::uint32_t limit);

	// The next request: keys [key(), window_end()), at most limit().
	const std::string &key() const { return start_; }
	const std::string &window_end() const { return window_end_; }
	std::uint32_t limit() const { return limit_; }
	bool done() const { return done_; }

	// What the request returned: N keys, the first and the last of them,
	// etcd's "more" (keys of the window were left unread) and "count"
	// (keys in the window).
	void advance(std::size_t n, std::string_view first, std::string_view last, bool more, std::int64_t count);

	// Key-space arithmetic (exposed for the tests): KEY's place in the
	// range, and the shortest key at PLACE.
	using Pos = unsigned __int128;
	Pos position(std::string_view key) const;
	std::string key_at(Pos place) const;

private:
	void set_window(Pos width);
	bool before_end(std::string_view k) const;

	std::string start_, end_, window_end_;
	std::uint32_t limit_;
	std::size_t base_;   // bytes every key of the range shares
	Pos window_ = 0;     // the window's width; 0: [start, end)
	bool done_ = false;
};

// Every key of [BEGIN, END) at one revision (that of the first answer),
// through RANGE(key, window_end, revision, limit) -> RangePage (fields
// kvs[].key, more, count, revision); FN(page) for each page, in order.
// Returns the revision. The next page is asked for (on a thread of its
// own) before FN runs on the page just read, so the member serves page
// K+1 while the caller loads page K: with etcd on other machines, as
// deployed, a sync takes about the longer of the two, not their sum. RANGE
// is never called twice at once; an exception of RANGE or FN ends the read
// (RANGE's after FN has had every page before it).
template <class RangeFn, class PageFn>
std::int64_t read_range(RangeFn &&range, const std::string &begin, const std::string &end, std::uint32_t limit,
			PageFn &&fn)
{
	RangePager pager(begin, end, limit);
	auto page = range(pager.key(), pager.window_end(), 0, pager.limit());
	const std::int64_t rev = page.revision;
	for (;;) {
		const std::size_t n = page.kvs.size();
		pager.advance(n, n ? std::string_view(page.kvs.front().key) : std::string_view(),
			      n ? std::string_view(page.kvs.back().key) : std::string_view(), page.more, page.count);
		std::future<std::decay_t<decltype(page)>> next;
		if (!pager.done())
			next = std::async(std::launch::async,
					  [&range, key = pager.key(), wend = pager.window_end(), lim = pager.limit(), rev] {
						  return range(key, wend, rev, lim);
					  });
		fn(page);
		if (!next.valid())
			return rev;
		page = next.get();
	}
}

} // namespace syncd
