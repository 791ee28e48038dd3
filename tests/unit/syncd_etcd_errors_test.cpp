// SPDX-License-Identifier: GPL-2.0
// ila-syncd: etcd errors classified by gRPC code and etcd's own messages.
#include <gtest/gtest.h>

#include "etcd_errors.h"

using namespace syncd;

TEST(SyncdEtcdErrors, EtcdMessages)
{
	EXPECT_EQ(classify_etcd_error(GrpcCode::OutOfRange, "etcdserver: mvcc: required revision has been compacted"),
		  EtcdFault::Compacted);
	// a user or role changed since the token was issued (JWT): a new
	// token, not a final refusal (InvalidArgument)
	EXPECT_EQ(classify_etcd_error(GrpcCode::InvalidArgument, "etcdserver: revision of auth store is old"),
		  EtcdFault::TokenRefused);
	EXPECT_EQ(classify_etcd_error(GrpcCode::Unauthenticated, "etcdserver: invalid auth token"),
		  EtcdFault::TokenRefused);
	EXPECT_EQ(classify_etcd_error(GrpcCode::InvalidArgument, "etcdserver: user name is empty"),
		  EtcdFault::TokenRefused);
	// credentials rolled out before auth is enabled: go on without a token
	EXPECT_EQ(classify_etcd_error(GrpcCode::FailedPrecondition, "etcdserver: authentication is not enabled"),
		  EtcdFault::AuthNotEnabled);
	EXPECT_EQ(classify_etcd_error(GrpcCode::InvalidArgument,
				      "etcdserver: authentication failed, invalid user ID or password"),
		  EtcdFault::Denied);
	EXPECT_EQ(classify_etcd_error(GrpcCode::PermissionDenied, "etcdserver: permission denied"), EtcdFault::Denied);
	for (const char *m : {"etcdserver: no leader", "etcdserver: leader changed", "etcdserver: request timed out",
			      "etcdserver: request timed out, possibly due to previous leader failure",
			      "etcdserver: server stopped", "etcdserver: too many requests"})
		EXPECT_EQ(classify_etcd_error(GrpcCode::Unavailable, m), EtcdFault::Unavailable) << m;
	// the same messages through a server or proxy that sends UNKNOWN
	EXPECT_EQ(classify_etcd_error(GrpcCode::Unknown, "etcdserver: no leader"), EtcdFault::Unavailable);
	EXPECT_EQ(classify_etcd_error(GrpcCode::FailedPrecondition, "etcdserver: not leader"), EtcdFault::Unavailable);
}

TEST(SyncdEtcdErrors, NotBySubstring)
{
	// a word in a message is not a meaning: a key named "compacted" in an
	// error, a "leader" in a permission error
	EXPECT_EQ(classify_etcd_error(GrpcCode::InvalidArgument, "etcdserver: key \"compacted\" is bad"),
		  EtcdFault::Denied);
	EXPECT_EQ(classify_etcd_error(GrpcCode::Unknown, "the leader of the band timed out"), EtcdFault::Other);
	EXPECT_EQ(classify_etcd_error(GrpcCode::Internal, "compacted"), EtcdFault::Other);
}

TEST(SyncdEtcdErrors, GrpcCodes)
{
	EXPECT_EQ(classify_etcd_error(GrpcCode::Unavailable, "failed to connect to all addresses"), EtcdFault::Unavailable);
	EXPECT_EQ(classify_etcd_error(GrpcCode::DeadlineExceeded, "Deadline Exceeded"), EtcdFault::Unavailable);
	EXPECT_EQ(classify_etcd_error(14, "Socket closed"), EtcdFault::Unavailable);
	EXPECT_EQ(classify_etcd_error(GrpcCode::Unauthenticated, "whatever"), EtcdFault::TokenRefused);
	EXPECT_EQ(classify_etcd_error(GrpcCode::PermissionDenied, "nope"), EtcdFault::Denied);
	EXPECT_EQ(classify_etcd_error(GrpcCode::Internal, "boom"), EtcdFault::Other);
}
