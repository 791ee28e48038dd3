// SPDX-License-Identifier: GPL-2.0
// RangePager: see range_pager.h.
#include "range_pager.h"

#include <algorithm>
#include <limits>

namespace syncd {

namespace {

using Pos = RangePager::Pos;
constexpr Pos kMax = std::numeric_limits<Pos>::max();

// A key's bytes after the shared head, as digits of base kBase: 0 is "the
// key ended" (so a key sorts before its extensions, as in etcd), then
// bytes below '0', the ten digits, ':', the bytes between ':' and 'a',
// 'a' to 'f', the bytes above 'f'. The order of keys is kept (bytes of one
// group count as equal; a place is written back with the most common byte
// of each group, '/' for the bytes below '0'); kDigits of them fit in a Pos.
constexpr unsigned kBase = 21;
constexpr unsigned kDigits = 29; // 21^29 < 2^128
constexpr unsigned char kFirstOf[kBase] = {0, '/', '0', '1', '2', '3', '4', '5', '6', '7', '8',
					   '9', ':', ';', 'a', 'b', 'c', 'd', 'e', 'f', 'g'};

unsigned digit(unsigned char b)
{
	if (b < '0')
		return 1;
	if (b <= '9')
		return 2 + (b - '0');
	if (b == ':')
		return 12;
	if (b < 'a')
		return 13;
	if (b <= 'f')
		return 14 + (b - 'a');
	return 20;
}

Pos mul_sat(Pos a, Pos b)
{
	return a && b > kMax / a ? kMax : a * b;
}

// A * NUM / DEN without overflow where it matters (saturating)
Pos scale(Pos a, Pos num, Pos den)
{
	if (den == 0)
		return kMax;
	if (a <= kMax / (num ? num : 1))
		return a * num / den;
	return mul_sat(a / den, num);
}

} // namespace

RangePager::RangePager(std::string begin, std::string end, std::uint32_t limit)
	: start_(std::move(begin)), end_(std::move(end)), limit_(std::max<std::uint32_t>(limit, 1))
{
	std::size_t i = 0;
	if (end_ != std::string(1, '\0'))
		while (i < start_.size() && i < end_.size() && start_[i] == end_[i])
			i++;
	base_ = i;
	window_end_ = end_;
}

Pos RangePager::position(std::string_view key) const
{
	Pos p = 0;
	for (unsigned i = 0; i < kDigits; i++) {
		const std::size_t at = base_ + i;
		p = p * kBase + (at < key.size() ? digit(static_cast<unsigned char>(key[at])) : 0);
	}
	return p;
}

std::string RangePager::key_at(Pos place) const
{
	unsigned char d[kDigits];
	for (unsigned i = kDigits; i-- > 0;) {
		d[i] = static_cast<unsigned char>(place % kBase);
		place /= kBase;
	}
	unsigned len = kDigits;
	while (len && d[len - 1] == 0)
		len--;
	std::string k(start_.substr(0, base_));
	for (unsigned i = 0; i < len; i++)
		k.push_back(static_cast<char>(kFirstOf[d[i]]));
	return k;
}

bool RangePager::before_end(std::string_view k) const
{
	return end_ == std::string(1, '\0') || k < std::string_view(end_);
}

// The window [start_, start_ + WIDTH) (0: to the end), never empty, never
// past end_.
void RangePager::set_window(Pos width)
{
	window_ = width;
	window_end_ = end_;
	if (width == 0)
		return;
	const Pos p = position(start_);
	if (p > kMax - width)
		return;
	std::string e = key_at(p + width);
	if (before_end(e) && e > start_)
		window_end_ = std::move(e);
}

void RangePager::advance(std::size_t n, std::string_view first, std::string_view last, bool more,
			  std::int64_t count)
{
	if (done_)
		return;
	const Pos target = Pos(limit_) + limit_ / 4; // a quarter more than a page
	const bool bounded = window_end_ != end_;
	if (!more && !bounded) {
		done_ = true;
		return;
	}
	if (more && n == 0) { // "more" with nothing read: no estimate, read on unbounded
		set_window(0);
		return;
	}
	if (more && !bounded) {
		// a page of an unbounded read: the spread of its keys
		const Pos a = position(first), b = position(last);
		start_ = std::string(last) + '\0';
		set_window(n >= 2 ? std::max<Pos>(scale(b - a, target, Pos(n - 1)), 1) : window_);
	} else if (more) {
		// COUNT - N keys are left in [last, window end): that density
		const Pos wend = position(window_end_), at = position(last);
		const Pos rest = std::max<std::int64_t>(count - std::int64_t(n), 1);
		start_ = std::string(last) + '\0';
		set_window(std::max<Pos>(scale(wend > at ? wend - at : 1, target, rest), 1));
	} else {
		// the window read whole: COUNT keys in its width (at most four times
		// wider: past a gap the keys may be dense again)
		start_ = window_end_;
		const Pos grown = mul_sat(window_, 4);
		set_window(count > 0 ? std::min(grown, std::max<Pos>(scale(window_, target, Pos(count)), 1)) : grown);
	}
	if (!before_end(start_))
		done_ = true;
}

} // namespace syncd
