// SPDX-License-Identifier: GPL-2.0
// How `ila-syncd status` finds and asks the daemons: each daemon listens
// on the abstract unix socket "@ila-syncd/MAP" of its map's network
// namespace (abstract names are per network namespace, so one name per
// map and namespace: a second daemon for the same map is refused, and
// the socket disappears with the process). A client sends "json\n" or
// "text\n" and reads the answer until EOF. Clients only believe an
// answer from a root-owned (or their own uid's) socket.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace syncd {

class StatusServer {
public:
	// Binds the socket of MAP in the calling thread's network namespace;
	// throws std::runtime_error (EADDRINUSE: "another ila-syncd keeps
	// map MAP in this network namespace").
	explicit StatusServer(const std::string &map);
	~StatusServer();
	StatusServer(const StatusServer &) = delete;
	StatusServer &operator=(const StatusServer &) = delete;
	// Answers requests with RENDER(json) until stop() (blocks).
	void serve(const std::function<std::string(bool json)> &render);
	void stop();

private:
	int fd_ = -1;
	int stop_pipe_[2] = {-1, -1};
};

// The maps that have a daemon in the current network namespace (from
// /proc/net/unix), sorted.
std::vector<std::string> running_daemons();
// The answer of MAP's daemon; throws std::runtime_error.
std::string query_daemon(const std::string &map, bool json, double timeout_s);

} // namespace syncd
