// SPDX-License-Identifier: GPL-2.0
#include "etcd_client.h"

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include <google/protobuf/arena.h>

namespace syncd {

namespace {

std::string read_secret_file(const std::string &path, const char *what)
{
	std::ifstream f(path, std::ios::binary);
	if (!f)
		throw std::runtime_error(std::string(what) + " " + path + ": cannot read it");
	std::ostringstream ss;
	ss << f.rdbuf();
	if (f.bad())
		throw std::runtime_error(std::string(what) + " " + path + ": read error");
	return ss.str();
}

std::string code_name(grpc::StatusCode c)
{
	switch (c) {
	case grpc::StatusCode::OK: return "OK";
	case grpc::StatusCode::CANCELLED: return "CANCELLED";
	case grpc::StatusCode::UNKNOWN: return "UNKNOWN";
	case grpc::StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
	case grpc::StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
	case grpc::StatusCode::NOT_FOUND: return "NOT_FOUND";
	case grpc::StatusCode::ALREADY_EXISTS: return "ALREADY_EXISTS";
	case grpc::StatusCode::PERMISSION_DENIED: return "PERMISSION_DENIED";
	case grpc::StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
	case grpc::StatusCode::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
	case grpc::StatusCode::ABORTED: return "ABORTED";
	case grpc::StatusCode::OUT_OF_RANGE: return "OUT_OF_RANGE";
	case grpc::StatusCode::UNIMPLEMENTED: return "UNIMPLEMENTED";
	case grpc::StatusCode::INTERNAL: return "INTERNAL";
	case grpc::StatusCode::UNAVAILABLE: return "UNAVAILABLE";
	case grpc::StatusCode::DATA_LOSS: return "DATA_LOSS";
	case grpc::StatusCode::UNAUTHENTICATED: return "UNAUTHENTICATED";
	default: return "code " + std::to_string(int(c));
	}
}

EtcdFault classify(const grpc::Status &st)
{
	return classify_etcd_error(int(st.error_code()), st.error_message());
}

} // namespace

bool transport_failure(const grpc::Status &st)
{
	return classify(st) == EtcdFault::Unavailable;
}

std::string describe(const grpc::Status &st)
{
	return code_name(st.error_code()) + ": " + st.error_message();
}

// ---- WatchStream -------------------------------------------------------------

WatchStream::~WatchStream()
{
	if (rw_ && !finished_) {
		ctx_->TryCancel();
		finish();
	}
}

bool WatchStream::read(etcdserverpb::WatchResponse &resp)
{
	return rw_->Read(&resp);
}

bool WatchStream::request_progress()
{
	etcdserverpb::WatchRequest req;
	req.mutable_progress_request();
	std::lock_guard lock(write_mu_);
	return rw_->Write(req);
}

void WatchStream::cancel()
{
	ctx_->TryCancel();
}

grpc::Status WatchStream::finish()
{
	if (finished_)
		return grpc::Status(grpc::StatusCode::CANCELLED, "finished");
	finished_ = true;
	return rw_->Finish();
}

// ---- EtcdClient --------------------------------------------------------------

EtcdClient::EtcdClient(const Options &o) : timeout_(o.timeout), user_(o.user)
{
	std::shared_ptr<grpc::ChannelCredentials> creds;
	if (o.endpoints.at(0).tls) {
		grpc::SslCredentialsOptions ssl;
		if (!o.cacert.empty())
			ssl.pem_root_certs = read_secret_file(o.cacert, "--cacert");
		if (!o.cert.empty()) {
			ssl.pem_cert_chain = read_secret_file(o.cert, "--cert");
			ssl.pem_private_key = read_secret_file(o.key, "--key");
		}
		creds = grpc::SslCredentials(ssl);
	} else {
		creds = grpc::InsecureChannelCredentials();
	}
	if (!o.password_file.empty()) {
		password_ = read_secret_file(o.password_file, "--password-file");
		if (auto nl = password_.find_first_of("\r\n"); nl != std::string::npos)
			password_.erase(nl);
		if (password_.empty())
			throw std::runtime_error("--password-file " + o.password_file + ": empty password");
	}
	grpc::ChannelArguments args;
	args.SetMaxReceiveMessageSize(-1);
	args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10000);
	args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5000);
	args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 0);
	args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
	// reconnect soon after an endpoint comes back (gRPC's
	// MIN_RECONNECT_BACKOFF is the connect timeout: left at its default)
	args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
	args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
	args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
	// one connection per endpoint and client, not shared with other clients
	args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
	for (const auto &e : o.endpoints) {
		Ep ep;
		ep.ep = e;
		ep.channel = grpc::CreateCustomChannel(e.target(), creds, args);
		ep.kv = etcdserverpb::KV::NewStub(ep.channel);
		ep.watch = etcdserverpb::Watch::NewStub(ep.channel);
		ep.auth = etcdserverpb::Auth::NewStub(ep.channel);
		eps_.push_back(std::move(ep));
	}
}

const std::string &EtcdClient::endpoint() const
{
	return eps_[cur_ % eps_.size()].ep.url;
}

void EtcdClient::next_endpoint()
{
	cur_ = (cur_ + 1) % eps_.size();
}

std::unique_ptr<grpc::ClientContext> EtcdClient::context(bool stream)
{
	auto ctx = std::make_unique<grpc::ClientContext>();
	if (!stream)
		ctx->set_deadline(std::chrono::system_clock::now() +
				  std::chrono::milliseconds(std::int64_t(timeout_ * 1000)));
	else
		ctx->AddMetadata("hasleader", "true");
	std::lock_guard lock(token_mu_);
	if (!token_.empty())
		ctx->AddMetadata("token", token_);
	return ctx;
}

void EtcdClient::authenticate(Ep &ep)
{
	etcdserverpb::AuthenticateRequest req;
	etcdserverpb::AuthenticateResponse resp;
	req.set_name(user_);
	req.set_password(password_);
	grpc::ClientContext ctx;
	ctx.set_deadline(std::chrono::system_clock::now() +
			 std::chrono::milliseconds(std::int64_t(timeout_ * 1000)));
	grpc::Status st = ep.auth->Authenticate(&ctx, req, &resp);
	if (!st.ok() && classify(st) == EtcdFault::AuthNotEnabled) {
		// as clientv3: credentials may be rolled out before auth is
		// enabled; requests go without a token meanwhile
		std::lock_guard lock(token_mu_);
		token_.clear();
		auth_off_ = true;
		return;
	}
	if (!st.ok())
		throw EtcdError(st, "authenticate as " + user_ + " (" + ep.ep.url + "): " + describe(st));
	std::lock_guard lock(token_mu_);
	token_ = resp.token();
	auth_off_ = false;
}

void EtcdClient::forget_token()
{
	std::lock_guard lock(token_mu_);
	token_.clear();
	auth_off_ = false;
}

template <class Call> void EtcdClient::with_retry(const std::string &op, Call &&call)
{
	grpc::Status last;
	std::string last_url;
	bool reauthed = false;
	const std::size_t max_tries = std::size_t(rounds_) * eps_.size() + 1;
	for (std::size_t tries = 0; tries < max_tries; tries++) {
		if (tries > 0 && tries % eps_.size() == 0 && tries + 1 < max_tries)
			std::this_thread::sleep_for(std::chrono::milliseconds(500 * (tries / eps_.size())));
		Ep &ep = eps_[cur_ % eps_.size()];
		try {
			bool need_token;
			{
				std::lock_guard lock(token_mu_);
				need_token = !user_.empty() && token_.empty() && !auth_off_;
			}
			if (need_token)
				authenticate(ep);
		} catch (const EtcdError &e) {
			if (e.refused())
				throw;
			last = grpc::Status(e.code(), e.what());
			last_url = ep.ep.url;
			next_endpoint();
			continue;
		}
		auto ctx = context(false);
		grpc::Status st = call(ep, *ctx);
		if (st.ok())
			return;
		if (!user_.empty() && !reauthed && classify(st) == EtcdFault::TokenRefused) {
			// the token expired, the member restarted, a user or role
			// changed since it was issued (ErrAuthOldRevision), or auth
			// was enabled since: log in again, once
			reauthed = true;
			forget_token();
			tries--;
			continue;
		}
		if (!transport_failure(st))
			throw EtcdError(st, op + " (" + ep.ep.url + "): " + describe(st));
		last = st;
		last_url = ep.ep.url;
		next_endpoint();
	}
	throw EtcdError(last, op + ": no endpoint answered (last " + last_url + ": " +
						   (last.error_message().empty() ? describe(last) : last.error_message()) + ")");
}

RangePage EtcdClient::range(const std::string &key, const std::string &end, std::int64_t revision,
			    std::int64_t limit)
{
	etcdserverpb::RangeRequest req;
	req.set_key(key);
	req.set_range_end(end);
	req.set_revision(revision);
	req.set_limit(limit);
	// the answer's messages (one per key of a page) on an arena: one
	// allocation for them all, freed at once
	google::protobuf::Arena arena;
	auto &resp = *google::protobuf::Arena::CreateMessage<etcdserverpb::RangeResponse>(&arena);
	with_retry("range", [&](Ep &ep, grpc::ClientContext &ctx) { return ep.kv->Range(&ctx, req, &resp); });
	RangePage page;
	page.more = resp.more();
	page.count = resp.count();
	page.revision = resp.header().revision();
	page.kvs.reserve(std::size_t(resp.kvs_size()));
	for (auto &kv : *resp.mutable_kvs()) {
		KeyValue out;
		out.key = std::move(*kv.mutable_key());
		out.value = std::move(*kv.mutable_value());
		out.mod_revision = kv.mod_revision();
		page.kvs.push_back(std::move(out));
	}
	return page;
}

bool EtcdClient::answers(const std::string &endpoint, const std::string &key)
{
	for (auto &ep : eps_) {
		if (ep.ep.url != endpoint)
			continue;
		etcdserverpb::RangeRequest req;
		req.set_key(key);
		req.set_keys_only(true);
		etcdserverpb::RangeResponse resp;
		auto ctx = context(false);
		return ep.kv->Range(ctx.get(), req, &resp).ok();
	}
	return false;
}

std::vector<std::optional<KeyValue>> EtcdClient::get_many(const std::vector<std::string> &keys,
							  std::int64_t &revision)
{
	etcdserverpb::TxnRequest req;
	for (const auto &k : keys)
		req.add_success()->mutable_request_range()->set_key(k);
	etcdserverpb::TxnResponse resp;
	with_retry("get", [&](Ep &ep, grpc::ClientContext &ctx) { return ep.kv->Txn(&ctx, req, &resp); });
	if (resp.responses_size() != int(keys.size()))
		throw EtcdError(grpc::StatusCode::INTERNAL,
				"get: " + std::to_string(resp.responses_size()) + " answers to " +
					std::to_string(keys.size()) + " reads",
				EtcdFault::Other);
	revision = resp.header().revision();
	std::vector<std::optional<KeyValue>> out(keys.size());
	for (int i = 0; i < resp.responses_size(); i++) {
		const auto &r = resp.responses(i).response_range();
		if (r.kvs_size() == 0)
			continue;
		const auto &kv = r.kvs(0);
		out[std::size_t(i)] = KeyValue{kv.key(), kv.value(), kv.mod_revision()};
	}
	return out;
}

std::int64_t EtcdClient::write_txn(const std::vector<std::pair<std::string, std::string>> &puts,
				   const std::vector<std::string> &deletes)
{
	etcdserverpb::TxnRequest req;
	for (const auto &[k, v] : puts) {
		auto *p = req.add_success()->mutable_request_put();
		p->set_key(k);
		p->set_value(v);
	}
	for (const auto &k : deletes)
		req.add_success()->mutable_request_delete_range()->set_key(k);
	etcdserverpb::TxnResponse resp;
	with_retry("put", [&](Ep &ep, grpc::ClientContext &ctx) { return ep.kv->Txn(&ctx, req, &resp); });
	return resp.header().revision();
}

std::unique_ptr<WatchStream> EtcdClient::watch(const std::string &key, const std::string &end,
					       std::int64_t start_rev)
{
	Ep &ep = eps_[cur_ % eps_.size()];
	// the client's token, if it has one; a watch refused with it makes the
	// daemon forget it (forget_token()): etcd 3.4 refuses a watch with an
	// expired token as "permission denied"
	bool need_token;
	{
		std::lock_guard lock(token_mu_);
		need_token = !user_.empty() && token_.empty() && !auth_off_;
	}
	if (need_token)
		authenticate(ep);
	auto w = std::unique_ptr<WatchStream>(new WatchStream);
	w->endpoint_ = ep.ep.url;
	w->ctx_ = context(true);
	w->rw_ = ep.watch->Watch(w->ctx_.get());
	etcdserverpb::WatchRequest req;
	auto *c = req.mutable_create_request();
	c->set_key(key);
	c->set_range_end(end);
	c->set_start_revision(start_rev);
	c->set_progress_notify(true);
	// no fragments: this client takes messages of any size, and etcd 3.4
	// splits a response into fragments at a cost that grows with the
	// square of its events (sendFragments() sizes the fragment again after
	// each event added): a backlog of 30,000 events then takes it longer
	// than the progress check waits, on every member in turn
	c->set_fragment(false);
	std::lock_guard lock(w->write_mu_);
	w->rw_->Write(req); // a failure shows in the first read
	return w;
}

} // namespace syncd
