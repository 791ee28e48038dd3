// SPDX-License-Identifier: GPL-2.0
// What an etcd error means to ila-syncd, from the gRPC status code and
// etcd's own message (the fixed strings of etcd's rpctypes, as clientv3
// compares them), never from a word found somewhere in a message. Pure
// logic (unit-tested on the host): the codes are gRPC's numbers.
#pragma once

#include <string_view>

namespace syncd {

// gRPC status codes (grpc::StatusCode has the same numbers).
enum class GrpcCode {
	Ok = 0,
	Cancelled = 1,
	Unknown = 2,
	InvalidArgument = 3,
	DeadlineExceeded = 4,
	NotFound = 5,
	AlreadyExists = 6,
	PermissionDenied = 7,
	ResourceExhausted = 8,
	FailedPrecondition = 9,
	Aborted = 10,
	OutOfRange = 11,
	Unimplemented = 12,
	Internal = 13,
	Unavailable = 14,
	DataLoss = 15,
	Unauthenticated = 16,
};

enum class EtcdFault {
	Other,		// this request failed for good (a bad request...)
	Compacted,	// the revision asked for was compacted: read again at a new one
	Unavailable,	// this endpoint cannot serve now (transport, no leader,
			// timeout, stopping, too many requests): try another
	TokenRefused,	// the token is invalid or expired, or the auth store
			// changed since it was issued (user or role change), or
			// none was sent to a store with auth on: authenticate
			// again and retry
	AuthNotEnabled, // authenticate: auth is off in the store; go on without a token
	Denied,		// permission denied, wrong user or password: retrying the
			// same request elsewhere will not help
};

EtcdFault classify_etcd_error(GrpcCode code, std::string_view message);

inline EtcdFault classify_etcd_error(int code, std::string_view message)
{
	return classify_etcd_error(GrpcCode(code), message);
}

} // namespace syncd
