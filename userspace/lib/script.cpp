// SPDX-License-Identifier: GPL-2.0
#include "script.h"

#include <linux/ila_hook.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <ostream>

#include "ila_hook_client.h"
#include "ila_map_client.h"
#include "print.h"

namespace ila {

namespace {

struct Failure {
	std::size_t line;
	std::string text; // "command: reason"
};

std::int32_t default_priority(std::uint8_t point)
{
	return point == ILA_HOOK_INPUT || point == ILA_HOOK_POSTROUTING ? ILA_HOOK_PRI_SRC
									: ILA_HOOK_PRI_DST;
}

class Runner {
public:
	Runner(const std::vector<ScriptLine> &lines, const ScriptOptions &o) : lines_(lines), o_(o) {}
	int run(std::ostream &err);

private:
	void map_line(const ScriptLine &s);
	void hook_line(const ScriptLine &s);
	void end_map_run();
	bool stopped() const { return stop_ || (!failures_.empty() && !o_.force); }

	const std::vector<ScriptLine> &lines_;
	const ScriptOptions &o_;
	std::unique_ptr<IlaMapClient> maps_;
	std::unique_ptr<BatchSender> sender_;
	std::unique_ptr<IlaHookClient> hooks_;
	std::vector<std::string> have_maps_;
	std::vector<Hook> have_hooks_;
	std::vector<Failure> failures_;
	std::size_t map_failures_seen_ = 0, hooks_sent_ = 0;
	bool stop_ = false;
};

void Runner::map_line(const ScriptLine &s)
{
	if (!maps_) {
		maps_ = std::make_unique<IlaMapClient>();
		if (o_.exist)
			for (const auto &m : maps_->list())
				have_maps_.push_back(m.name);
		sender_ = std::make_unique<BatchSender>(*maps_, 128 * 1024, o_.force);
	}
	Command cmd = s.map;
	if (o_.exist && cmd.op == Op::Create) {
		if (std::find(have_maps_.begin(), have_maps_.end(), cmd.map) != have_maps_.end())
			return;
		have_maps_.push_back(cmd.map);
	}
	if (o_.exist && cmd.op == Op::Add)
		cmd.op = Op::Replace;
	if (!sender_->add(cmd, s.line))
		end_map_run();
}

// Sends what is queued; its failures join the list.
void Runner::end_map_run()
{
	if (!sender_)
		return;
	sender_->finish();
	const auto &f = sender_->failures();
	for (; map_failures_seen_ < f.size(); map_failures_seen_++) {
		const auto &x = f[map_failures_seen_];
		std::string t = x.command + ": " + std::strerror(x.error);
		if (!x.kernel_message.empty())
			t += (x.error == ENOBUFS ? " (" : " (kernel: ") + x.kernel_message + ")";
		failures_.push_back({x.line, t});
		if (x.error == ENOBUFS)
			stop_ = true; // the state of the batch is unknown
	}
}

void Runner::hook_line(const ScriptLine &s)
{
	end_map_run(); // the map lines before it are in place first
	if (stopped())
		return;
	if (!hooks_) {
		hooks_ = std::make_unique<IlaHookClient>();
		if (o_.exist)
			have_hooks_ = hooks_->list();
	}
	const HookCommand &hc = s.hook;
	auto it = std::find_if(have_hooks_.begin(), have_hooks_.end(),
			       [&](const Hook &h) { return h.name == hc.hook.name; });
	try {
		hooks_sent_++;
		if (hc.op == HookOp::Del) {
			hooks_->del(hc.hook.name);
			if (it != have_hooks_.end())
				have_hooks_.erase(it);
			return;
		}
		bool replace = hc.op == HookOp::Replace;
		if (o_.exist && hc.op == HookOp::Add && it != have_hooks_.end()) {
			// compare as listed: the kernel's defaults filled in
			Hook want = hc.hook;
			want.priority = want.priority.value_or(default_priority(want.point));
			want.translate = it->translate;
			want.csum_mode = want.csum_mode.value_or(0);
			want.direction = want.direction.value_or(0);
			if (hook_spec(want) == hook_spec(*it))
				return;
			if (want.point == it->point && want.priority == it->priority) {
				replace = true;
			} else {
				hooks_->del(hc.hook.name); // another place: no atomic way
			}
		}
		hooks_->add(hc.hook, replace);
		if (o_.exist) {
			Hook now = hc.hook;
			now.priority = now.priority.value_or(default_priority(now.point));
			if (it != have_hooks_.end())
				*it = now;
			else
				have_hooks_.push_back(now);
		}
	} catch (const NetlinkError &e) {
		failures_.push_back({s.line, e.what()});
	}
}

int Runner::run(std::ostream &err)
{
	if (lines_.empty())
		return 0;
	auto t0 = std::chrono::steady_clock::now();
	Progress progress(err, o_.src, lines_.size(), o_.progress);
	std::size_t done = 0;
	for (const auto &s : lines_) {
		if (stopped())
			break;
		if (s.is_hook)
			hook_line(s);
		else
			map_line(s);
		if (++done % 1024 == 0)
			progress.update(done);
	}
	if (!stopped())
		end_map_run();
	double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	std::size_t sent = hooks_sent_ + (sender_ ? sender_->sent() : 0);
	progress.finish(done); // lines handled (-exist skips some: not sent)

	std::stable_sort(failures_.begin(), failures_.end(),
			 [](const Failure &a, const Failure &b) { return a.line < b.line; });
	for (const auto &f : failures_)
		err << "ilactl: " << o_.src << ":" << f.line << ": " << f.text << "\n";
	if (!failures_.empty()) {
		err << "ilactl: " << o_.src << ": "
		    << (o_.force && !stop_ ? "failed lines: " + std::to_string(failures_.size()) + "; "
					   : std::string("stopped after the batch with errors; "))
		    << "commands sent: " << sent << " of " << lines_.size() << "\n";
		return 1;
	}
	if (o_.verbose) {
		char buf[160];
		std::snprintf(buf, sizeof(buf), ", %.3f s, %.0f commands/s\n", secs,
			      secs > 0 ? double(sent) / secs : 0.0);
		err << "ilactl: " << plural(sent, "command") << " in "
		    << plural((sender_ ? sender_->batches() : 0) + hooks_sent_, "batch") << buf;
	}
	return 0;
}

} // namespace

int run_script(const std::vector<ScriptLine> &lines, const ScriptOptions &o, std::ostream &err)
{
	return Runner(lines, o).run(err);
}

} // namespace ila
