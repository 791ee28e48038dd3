// SPDX-License-Identifier: GPL-2.0
// A client of etcd's v3 gRPC API (stubs generated from etcd's rpc.proto at
// build time): range reads (paginated, at one revision), transactions,
// watches; TLS and user/password authentication; several endpoints, the
// next one tried when one fails. Secrets (password, token, keys) are never
// put in a message.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "etcd/etcdserver/etcdserverpb/rpc.grpc.pb.h"
#include "etcd_errors.h"
#include "options.h"

namespace syncd {

// A failed etcd request: the gRPC status code and etcd's message, with the
// endpoint and the operation; what it means (etcd_errors.h) is classified
// from the code and etcd's own message, not from the text around it.
class EtcdError : public std::runtime_error {
public:
	EtcdError(grpc::StatusCode code, const std::string &msg, EtcdFault fault)
		: std::runtime_error(msg), code_(code), fault_(fault)
	{
	}
	// A failed call: STATUS classified, MSG the whole message.
	EtcdError(const grpc::Status &status, const std::string &msg)
		: EtcdError(status.error_code(), msg, classify_etcd_error(int(status.error_code()), status.error_message()))
	{
	}
	grpc::StatusCode code() const { return code_; }
	EtcdFault fault() const { return fault_; }
	// The revision asked for is older than the store's compaction.
	bool compacted() const { return fault_ == EtcdFault::Compacted; }
	// Refused for good (permission denied, bad credentials): retrying the
	// same request elsewhere will not help.
	bool refused() const { return fault_ == EtcdFault::Denied; }

private:
	grpc::StatusCode code_;
	EtcdFault fault_;
};

struct KeyValue {
	std::string key, value;
	std::int64_t mod_revision = 0;
};

struct RangePage {
	std::vector<KeyValue> kvs;
	bool more = false;
	std::int64_t count = 0;
	std::int64_t revision = 0; // the store revision it was read at
};

class EtcdClient;

// One watch on one endpoint. read() blocks; request_progress() and
// cancel() may be called from another thread meanwhile.
class WatchStream {
public:
	~WatchStream();
	// The next response; false when the stream ended (see finish()).
	bool read(etcdserverpb::WatchResponse &resp);
	// Asks for a progress response (the store's current revision).
	bool request_progress();
	// Ends the stream (read() returns false).
	void cancel();
	// Why the stream ended.
	grpc::Status finish();
	const std::string &endpoint() const { return endpoint_; }

private:
	friend class EtcdClient;
	WatchStream() = default;
	std::unique_ptr<grpc::ClientContext> ctx_;
	std::unique_ptr<grpc::ClientReaderWriter<etcdserverpb::WatchRequest, etcdserverpb::WatchResponse>> rw_;
	std::mutex write_mu_;
	std::string endpoint_;
	bool finished_ = false;
};

class EtcdClient {
public:
	// Reads the TLS files and the password file (throws std::runtime_error
	// naming the file that cannot be read) and sets up one channel per
	// endpoint.
	explicit EtcdClient(const Options &o);

	// Keys [KEY, END) at REVISION (0: the current one), at most LIMIT
	// (0: all). Linearizable.
	RangePage range(const std::string &key, const std::string &end, std::int64_t revision,
			std::int64_t limit);
	// The current value of each of KEYS in one read-only transaction
	// (one revision for all); nullopt where a key is absent.
	std::vector<std::optional<KeyValue>> get_many(const std::vector<std::string> &keys,
						      std::int64_t &revision);
	// Puts and deletes in one transaction; returns its revision.
	std::int64_t write_txn(const std::vector<std::pair<std::string, std::string>> &puts,
			       const std::vector<std::string> &deletes);
	// Whether ENDPOINT answers a linearizable read of the one key KEY within
	// the timeout: the member is up and in a quorum (no other endpoint is
	// tried).
	bool answers(const std::string &endpoint, const std::string &key);
	// Opens a watch of [KEY, END) from START_REV on the current endpoint;
	// the caller reads the "created" response itself.
	std::unique_ptr<WatchStream> watch(const std::string &key, const std::string &end,
					   std::int64_t start_rev);

	// How many times a request goes round every endpoint (with a pause
	// between rounds) before it fails; default 1 (the daemon has its own
	// retry loop; the one-shot commands wait longer).
	void set_rounds(int rounds) { rounds_ = rounds; }

	// The token was refused (a watch canceled for want of permission: etcd
	// 3.4 says so for an expired token too): the next request or watch
	// authenticates again. One token serves every request and watch until
	// then.
	void forget_token();

	// The endpoint requests go to now; next_endpoint() moves on.
	const std::string &endpoint() const;
	void next_endpoint();
	std::size_t endpoint_count() const { return eps_.size(); }

private:
	struct Ep {
		Endpoint ep;
		std::shared_ptr<grpc::Channel> channel;
		std::unique_ptr<etcdserverpb::KV::Stub> kv;
		std::unique_ptr<etcdserverpb::Watch::Stub> watch;
		std::unique_ptr<etcdserverpb::Auth::Stub> auth;
	};
	// Runs CALL on the current endpoint; on a transport failure tries the
	// next endpoints (each once); on an expired token authenticates again.
	// Throws EtcdError naming OP and the last endpoint.
	template <class Call> void with_retry(const std::string &op, Call &&call);
	std::unique_ptr<grpc::ClientContext> context(bool stream);
	void authenticate(Ep &ep);

	std::vector<Ep> eps_;
	std::atomic<std::size_t> cur_{0};
	double timeout_;
	int rounds_ = 1;
	std::string user_, password_;
	std::mutex token_mu_;
	std::string token_;
	// the store answered "authentication is not enabled": requests go
	// without a token until one is asked for (auth enabled later)
	bool auth_off_ = false;
};

// Whether STATUS means "this endpoint cannot serve now" (try another).
bool transport_failure(const grpc::Status &status);

// "CODE: message" of a gRPC status.
std::string describe(const grpc::Status &status);

} // namespace syncd
