// SPDX-License-Identifier: GPL-2.0
#include "etcd_errors.h"

namespace syncd {

namespace {

// etcd's messages (etcdserver/api/v3rpc/rpctypes), by meaning
constexpr std::string_view kCompacted = "etcdserver: mvcc: required revision has been compacted";
constexpr std::string_view kUnavailable[] = {
	"etcdserver: no leader",
	"etcdserver: not leader",
	"etcdserver: leader changed",
	"etcdserver: not capable",
	"etcdserver: server stopped",
	"etcdserver: request timed out",
	"etcdserver: request timed out, possibly due to previous leader failure",
	"etcdserver: request timed out, possibly due to connection lost",
	"etcdserver: request timed out, waiting for the applied index took too long",
	"etcdserver: unhealthy cluster",
	"etcdserver: too many requests",
};
constexpr std::string_view kTokenRefused[] = {
	"etcdserver: invalid auth token",
	"etcdserver: revision of auth store is old",
	"etcdserver: user name is empty",
};
constexpr std::string_view kAuthNotEnabled = "etcdserver: authentication is not enabled";

template <std::size_t N> bool one_of(std::string_view m, const std::string_view (&list)[N])
{
	for (auto s : list)
		if (m == s)
			return true;
	return false;
}

} // namespace

EtcdFault classify_etcd_error(GrpcCode code, std::string_view m)
{
	// etcd's own errors first: some travel with another code through
	// proxies and older servers (UNKNOWN), the message is the same
	if (m == kCompacted)
		return EtcdFault::Compacted;
	if (one_of(m, kTokenRefused))
		return EtcdFault::TokenRefused;
	if (m == kAuthNotEnabled)
		return EtcdFault::AuthNotEnabled;
	if (one_of(m, kUnavailable))
		return EtcdFault::Unavailable;
	switch (code) {
	case GrpcCode::Unavailable:
	case GrpcCode::DeadlineExceeded:
	case GrpcCode::ResourceExhausted:
	case GrpcCode::Aborted:
		return EtcdFault::Unavailable;
	case GrpcCode::Unauthenticated:
		return EtcdFault::TokenRefused;
	case GrpcCode::PermissionDenied:
	case GrpcCode::InvalidArgument:
	case GrpcCode::FailedPrecondition:
		return EtcdFault::Denied;
	default:
		return EtcdFault::Other;
	}
}

} // namespace syncd
