// SPDX-License-Identifier: GPL-2.0
#include "cache_table.h"

#include <algorithm>

namespace syncd {

CacheTable::CacheTable(std::uint32_t capacity, double idle_timeout, double negative_ttl)
	: capacity_(capacity), idle_timeout_(idle_timeout), negative_ttl_(negative_ttl)
{
}

std::optional<Mapping> CacheTable::find(std::uint64_t id) const
{
	auto it = index_.find(id);
	if (it == index_.end())
		return std::nullopt;
	const Slot &s = slots_[it->second];
	return Mapping{s.locator, s.csum_mode};
}

std::optional<std::int64_t> CacheTable::revision_of(std::uint64_t id) const
{
	auto it = index_.find(id);
	if (it == index_.end())
		return std::nullopt;
	return slots_[it->second].rev;
}

std::vector<std::uint64_t> CacheTable::ids() const
{
	std::vector<std::uint64_t> v;
	v.reserve(index_.size());
	for (const auto &[id, idx] : index_)
		v.push_back(id);
	return v;
}

void CacheTable::lru_unlink(std::uint32_t idx)
{
	Slot &s = slots_[idx];
	if (s.prev != kNil)
		slots_[s.prev].next = s.next;
	else
		head_ = s.next;
	if (s.next != kNil)
		slots_[s.next].prev = s.prev;
	else
		tail_ = s.prev;
	s.prev = s.next = kNil;
}

void CacheTable::lru_push_back(std::uint32_t idx)
{
	Slot &s = slots_[idx];
	s.prev = tail_;
	s.next = kNil;
	if (tail_ != kNil)
		slots_[tail_].next = idx;
	else
		head_ = idx;
	tail_ = idx;
}

void CacheTable::remove_slot(std::uint32_t idx)
{
	lru_unlink(idx);
	index_.erase(slots_[idx].id);
	free_.push_back(idx);
}

CacheAction CacheTable::install(std::uint64_t id, const Mapping &m, std::int64_t rev, double now,
				std::vector<std::uint64_t> &evicted)
{
	while (index_.size() >= capacity_ && head_ != kNil) {
		std::uint32_t victim = head_;
		evicted.push_back(slots_[victim].id);
		remove_slot(victim);
	}
	std::uint32_t idx;
	if (!free_.empty()) {
		idx = free_.back();
		free_.pop_back();
	} else {
		idx = std::uint32_t(slots_.size());
		slots_.emplace_back();
	}
	slots_[idx] = Slot{id, m.locator, rev, 0, now, kNil, kNil, gen_, m.csum_mode};
	lru_push_back(idx);
	index_.emplace(id, idx);
	negative_.erase(id);
	return CacheAction{CacheAction::Install, m};
}

MissVerdict CacheTable::on_miss(std::uint64_t id, double now)
{
	if (index_.count(id))
		return MissVerdict::Cached;
	if (pending_.count(id))
		return MissVerdict::Pending;
	if (auto it = negative_.find(id); it != negative_.end()) {
		if (now < it->second.expires)
			return MissVerdict::Negative;
		negative_.erase(it);
	}
	pending_.emplace(id, PendingFetch{});
	return MissVerdict::Fetch;
}

CacheAction CacheTable::on_change(std::uint64_t id, const std::optional<Mapping> &m, std::int64_t rev,
				  double now, std::vector<std::uint64_t> &evicted)
{
	if (auto it = index_.find(id); it != index_.end()) {
		Slot &s = slots_[it->second];
		if (rev <= s.rev)
			return {};
		if (!m) {
			remove_slot(it->second);
			return CacheAction{CacheAction::Remove, {}};
		}
		s.rev = rev;
		if (s.locator == m->locator && s.csum_mode == m->csum_mode)
			return {};
		s.locator = m->locator;
		s.csum_mode = m->csum_mode;
		return CacheAction{CacheAction::Update, *m};
	}
	if (auto it = pending_.find(id); it != pending_.end()) {
		if (!it->second.have_event || rev > it->second.event_rev) {
			it->second.have_event = true;
			it->second.event = m;
			it->second.event_rev = rev;
		}
		return {};
	}
	if (auto it = negative_.find(id); it != negative_.end()) {
		// wanted a moment ago and just appeared: install it now
		if (rev <= it->second.rev)
			return {};
		if (!m) {
			it->second.rev = rev;
			return {};
		}
		negative_.erase(it);
		return install(id, *m, rev, now, evicted);
	}
	return {};
}

CacheAction CacheTable::on_fetched(std::uint64_t id, const std::optional<Mapping> &m, std::int64_t mod_rev,
				   std::int64_t read_rev, double now, std::vector<std::uint64_t> &evicted)
{
	std::optional<Mapping> want = m;
	std::int64_t rev = m ? mod_rev : read_rev;
	if (auto it = pending_.find(id); it != pending_.end()) {
		if (it->second.have_event && it->second.event_rev > read_rev) {
			want = it->second.event;
			rev = it->second.event_rev;
		}
		pending_.erase(it);
	}
	if (auto it = index_.find(id); it != index_.end()) {
		// installed meanwhile (e.g. adopted): only a newer answer counts
		if (rev <= slots_[it->second].rev)
			return {};
		return on_change(id, want, rev, now, evicted);
	}
	if (!want) {
		negative_[id] = NegativeEntry{now + negative_ttl_, std::max(rev, read_rev)};
		return {};
	}
	return install(id, *want, rev, now, evicted);
}

void CacheTable::fetch_failed(std::uint64_t id)
{
	pending_.erase(id);
}

void CacheTable::forget(std::uint64_t id)
{
	if (auto it = index_.find(id); it != index_.end())
		remove_slot(it->second);
}

void CacheTable::sweep_begin()
{
	gen_++;
}

void CacheTable::sweep_seen(std::uint64_t id, std::uint64_t hits, double now)
{
	auto it = index_.find(id);
	if (it == index_.end())
		return;
	Slot &s = slots_[it->second];
	s.seen_gen = gen_;
	if (hits != s.hits) {
		// hits moved (or were reset): in use
		s.hits = hits;
		s.last_active = now;
		lru_unlink(it->second);
		lru_push_back(it->second);
	}
}

std::vector<std::uint64_t> CacheTable::sweep_end(double now)
{
	std::vector<std::uint64_t> idle;
	std::vector<std::uint32_t> gone;
	for (std::uint32_t idx = head_; idx != kNil; idx = slots_[idx].next) {
		const Slot &s = slots_[idx];
		if (s.seen_gen != gen_)
			gone.push_back(idx);
		else if (now - s.last_active >= idle_timeout_)
			idle.push_back(s.id);
	}
	for (auto idx : gone)
		remove_slot(idx);
	for (auto id : idle)
		forget(id);
	for (auto it = negative_.begin(); it != negative_.end();) {
		if (now >= it->second.expires)
			it = negative_.erase(it);
		else
			++it;
	}
	return idle;
}

bool RateLimiter::take(double now)
{
	if (last_ >= 0 && now > last_)
		tokens_ = std::min(burst_, tokens_ + (now - last_) * rate_);
	last_ = now;
	if (tokens_ < 1)
		return false;
	tokens_ -= 1;
	return true;
}

std::optional<std::uint64_t> FetchQueue::push(std::uint64_t id)
{
	q_.push_back(id);
	if (q_.size() <= cap_)
		return std::nullopt;
	const std::uint64_t old = q_.front();
	q_.pop_front();
	return old;
}

std::vector<std::uint64_t> FetchQueue::take(std::size_t n)
{
	std::vector<std::uint64_t> v;
	while (!q_.empty() && v.size() < n) {
		v.push_back(q_.back());
		q_.pop_back();
	}
	return v;
}

} // namespace syncd
