// SPDX-License-Identifier: GPL-2.0
// ila-syncd's state machine without I/O: revisions and "current" (a store
// restored from a snapshot, progress answers ahead of events), changes the
// kernel refused (retried; stale meanwhile), the kernel's notifications of
// a map changed by someone else.
#include <gtest/gtest.h>

#include "sync_state.h"

using namespace syncd;

namespace {

// A daemon that synced at REV and watches.
SyncTracker watching_at(std::int64_t rev)
{
	SyncTracker t(0);
	t.synced(rev, 0, 1);
	t.watching(true, 1);
	EXPECT_TRUE(t.header(rev, 1));
	return t;
}

} // namespace

TEST(SyncdSyncState, CurrentWhenWatchingAndCaughtUp)
{
	SyncTracker t(0);
	EXPECT_FALSE(t.current());
	EXPECT_TRUE(t.stale());
	t.synced(100, 0, 1);
	EXPECT_FALSE(t.current()); // not watching yet
	t.watching(true, 2);
	EXPECT_TRUE(t.current());
	EXPECT_FALSE(t.stale());
	EXPECT_EQ(t.lag_seconds(5), 0);
	// the store moved on: behind until the events are applied
	EXPECT_TRUE(t.header(110, 6));
	EXPECT_FALSE(t.current());
	EXPECT_DOUBLE_EQ(t.lag_seconds(8), 2);
	t.applied(110, 9);
	EXPECT_TRUE(t.current());
	EXPECT_EQ(t.applied_revision(), 110);
	// a connection lost: stale, and the lag counts from then
	t.watching(false, 20);
	EXPECT_TRUE(t.stale());
	EXPECT_DOUBLE_EQ(t.lag_seconds(23), 3);
}

TEST(SyncdSyncState, ProgressAnswerAheadOfEventsMovesOnlyTheStatus)
{
	// etcd 3.4 may answer a progress request with a revision whose events
	// it has not sent yet: the watch must not resume after it
	SyncTracker t = watching_at(100);
	EXPECT_TRUE(t.header(120, 2));
	t.progress_answer(120, 2);
	EXPECT_EQ(t.revision(), 120);
	EXPECT_EQ(t.applied_revision(), 100);
	// the watcher's own progress notification: every event up to it was sent
	EXPECT_TRUE(t.header(125, 3));
	t.progress_notify(125, 3);
	EXPECT_EQ(t.applied_revision(), 125);
	EXPECT_TRUE(t.current());
}

TEST(SyncdSyncState, StoreRestoredFromASnapshotForcesAResyncAndTheRevisionGoesDown)
{
	SyncTracker t = watching_at(500);
	// the restored store (revision 300) accepts a watch from 501 and
	// answers with its own revision: this is not an ordinary header
	EXPECT_FALSE(t.header(300, 5));
	EXPECT_EQ(t.store_revision(), 500); // nothing recorded
	// a linearizable read finds the store at 300, below 500 applied
	EXPECT_TRUE(store_went_back(300, t.applied_revision()));
	// a member that is only behind the others: the read finds the store ahead
	EXPECT_FALSE(store_went_back(520, t.applied_revision()));
	EXPECT_FALSE(store_went_back(500, t.applied_revision()));
	// the full resync reads the store at 302: both revisions go down
	t.watching(false, 6);
	t.synced(302, 0, 7);
	EXPECT_EQ(t.revision(), 302);
	EXPECT_EQ(t.store_revision(), 302);
	EXPECT_EQ(t.applied_revision(), 302);
	t.watching(true, 8);
	EXPECT_TRUE(t.header(302, 8));
	EXPECT_TRUE(t.current());
	// and the writes made after the restore (303...) are applied
	EXPECT_TRUE(t.header(303, 9));
	EXPECT_FALSE(t.current());
	t.applied(303, 9);
	EXPECT_TRUE(t.current());
	EXPECT_EQ(t.revision(), 303);
}

TEST(SyncdSyncState, KeysBehindKeepTheStatusStale)
{
	SyncTracker t = watching_at(100);
	EXPECT_TRUE(t.header(101, 2));
	t.applied(101, 2);
	t.set_behind(1, 2); // the kernel refused one change (ENOSPC)
	EXPECT_FALSE(t.current());
	EXPECT_TRUE(t.stale());
	EXPECT_EQ(t.behind(), 1u);
	EXPECT_DOUBLE_EQ(t.lag_seconds(5), 3);
	// progress goes on: still not current
	EXPECT_TRUE(t.header(110, 6));
	t.progress_notify(110, 6);
	EXPECT_FALSE(t.current());
	EXPECT_DOUBLE_EQ(t.lag_seconds(7), 5);
	// the retry applied it
	t.set_behind(0, 8);
	EXPECT_TRUE(t.current());
	EXPECT_FALSE(t.stale());
	EXPECT_EQ(t.lag_seconds(9), 0);
	// a full sync that left a key out is not current either
	t.synced(120, 2, 10);
	EXPECT_TRUE(t.stale());
	EXPECT_FALSE(t.current());
}

TEST(SyncdSyncState, RetryQueueNewestChangeWinsAndBacksOff)
{
	RetryQueue q;
	EXPECT_FALSE(q.due(0));
	const Mapping a{0x20010db800010000, 1}, b{0x20010db800020000, 1};
	q.failed(7, a, 10);
	EXPECT_EQ(q.size(), 1u);
	EXPECT_FALSE(q.due(10));
	EXPECT_TRUE(q.due(10 + RetryQueue::kFirstRetry));
	q.failed(7, b, 10.1); // a newer change of the same key
	EXPECT_EQ(q.size(), 1u);
	auto round = q.take(11);
	ASSERT_EQ(round.size(), 1u);
	EXPECT_EQ(round[0].first, 7u);
	EXPECT_EQ(round[0].second, b);
	// still refused: the next round waits longer, and longer, up to the cap
	q.failed(7, b, 11);
	EXPECT_FALSE(q.due(11.4));
	EXPECT_TRUE(q.due(11.5));
	double t = 11.5, last = 0;
	for (int i = 0; i < 10; i++) {
		q.take(t);
		double d = 0.125;
		while (!q.due(t + d))
			d += 0.125;
		EXPECT_GE(d, last);
		EXPECT_LE(d, RetryQueue::kMaxRetry);
		last = d;
		t += d;
	}
	EXPECT_DOUBLE_EQ(last, RetryQueue::kMaxRetry);
	// an entry deleted made room: a round now
	q.kick();
	EXPECT_TRUE(q.due(t));
	// a delete that must be retried too
	q.failed(9, std::nullopt, t);
	round = q.take(t);
	ASSERT_EQ(round.size(), 2u);
	EXPECT_FALSE(round[1].second);
	q.done(7);
	q.done(9);
	EXPECT_TRUE(q.empty());
	EXPECT_FALSE(q.due(t + 100));
	// after the queue emptied, a new failure is retried soon again
	q.failed(3, a, t + 100);
	EXPECT_TRUE(q.due(t + 100 + RetryQueue::kFirstRetry));
}

TEST(SyncdSyncState, ForeignMapChanges)
{
	auto cmd = [](ila::Op op, std::string map, std::string map2 = "") {
		ila::Command c;
		c.op = op;
		c.map = std::move(map);
		c.map2 = std::move(map2);
		return c;
	};
	const std::string map = "hosts", scratch = "hosts.sync";
	EXPECT_EQ(foreign_change(cmd(ila::Op::Flush, "hosts"), map, scratch), ForeignChange::Flushed);
	EXPECT_EQ(foreign_change(cmd(ila::Op::Destroy, "hosts"), map, scratch), ForeignChange::Destroyed);
	EXPECT_EQ(foreign_change(cmd(ila::Op::Swap, "hosts", "other"), map, scratch), ForeignChange::Swapped);
	EXPECT_EQ(foreign_change(cmd(ila::Op::Swap, "other", "hosts"), map, scratch), ForeignChange::Swapped);
	// the daemon's own: its full sync's swap and scratch map
	EXPECT_EQ(foreign_change(cmd(ila::Op::Swap, "hosts", "hosts.sync"), map, scratch), ForeignChange::None);
	EXPECT_EQ(foreign_change(cmd(ila::Op::Destroy, "hosts.sync"), map, scratch), ForeignChange::None);
	EXPECT_EQ(foreign_change(cmd(ila::Op::Create, "hosts.sync"), map, scratch), ForeignChange::None);
	// other maps, and entries
	EXPECT_EQ(foreign_change(cmd(ila::Op::Flush, "hosts2"), map, scratch), ForeignChange::None);
	EXPECT_EQ(foreign_change(cmd(ila::Op::Swap, "a", "b"), map, scratch), ForeignChange::None);
	EXPECT_EQ(foreign_change(cmd(ila::Op::Replace, "hosts"), map, scratch), ForeignChange::None);
	EXPECT_EQ(foreign_change(cmd(ila::Op::Del, "hosts"), map, scratch), ForeignChange::None);
	EXPECT_STREQ(foreign_change_name(ForeignChange::Flushed), "flushed");
}

TEST(SyncdSyncState, ReconnectBackoffIsExponentialCappedAndJittered)
{
	// the middle of the jitter: 0.1, 0.2, 0.4 ... up to 3 s
	EXPECT_DOUBLE_EQ(reconnect_delay(0, 0.5), kFirstBackoff);
	EXPECT_DOUBLE_EQ(reconnect_delay(1, 0.5), 2 * kFirstBackoff);
	EXPECT_DOUBLE_EQ(reconnect_delay(3, 0.5), 8 * kFirstBackoff);
	EXPECT_DOUBLE_EQ(reconnect_delay(10, 0.5), kMaxBackoff);
	EXPECT_DOUBLE_EQ(reconnect_delay(1000, 0.5), kMaxBackoff);
	// daemons that failed together wait between half and one and a half
	// times as long: not in lockstep
	EXPECT_DOUBLE_EQ(reconnect_delay(10, 0), kMaxBackoff / 2);
	EXPECT_NEAR(reconnect_delay(10, 0.999), kMaxBackoff * 1.499, 1e-9);
	EXPECT_NE(reconnect_delay(4, 0.1), reconnect_delay(4, 0.7));
	for (int a = 0; a < 20; a++)
		EXPECT_LE(reconnect_delay(a, 0.3), reconnect_delay(a + 1, 0.3));
}

TEST(SyncdSyncState, LogBudgetCapsPerKeyMessages)
{
	LogBudget b(3, 60);
	std::uint64_t s = 99;
	for (int i = 0; i < 3; i++) {
		EXPECT_TRUE(b.take(10 + i, s));
		EXPECT_EQ(s, 0u);
	}
	// a storm of refusals: counted, not logged
	for (int i = 0; i < 1000; i++)
		EXPECT_FALSE(b.take(20, s));
	// the next minute: logging resumes and says how many were not logged
	EXPECT_TRUE(b.take(71, s));
	EXPECT_EQ(s, 1000u);
	EXPECT_TRUE(b.take(72, s));
	EXPECT_EQ(s, 0u);
}
