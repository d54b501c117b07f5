// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The readiness rule of the public Client (ListsReady, DescribeUnreadyLists in include/urlguard/client.h), which
// Client::WaitUntilReady and urlguardd --wait-for-first-sync share, and WaitUntilReady on a directory no syncer
// fills. Waiting for lists a real server installs: tests/client_e2e_test.cc, tests/daemon_test.cc.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "tests/test_util.h"
#include "urlguard/client.h"

namespace urlguard {
namespace {

ListStatus Fresh(const std::string& name) {
  ListStatus l;
  l.name = name;
  l.version = 3;
  return l;
}

ListStatus Stale(const std::string& name, StaleReason reason) {
  ListStatus l = Fresh(name);
  l.stale = true;
  l.stale_reason = reason;
  if (reason == StaleReason::kNotInstalled) l.version = 0;
  return l;
}

TEST(ListsReady, EverySubscribedListMustBeInstalledAndFresh) {
  std::vector<ListStatus> unready;
  EXPECT_TRUE(ListsReady({Fresh("malware"), Fresh("phishing")}, {"phishing", "malware"}, &unready));
  EXPECT_TRUE(unready.empty());
  // A list nobody subscribed to does not count, stale or not.
  EXPECT_TRUE(ListsReady({Fresh("phishing"), Stale("old", StaleReason::kExpired)}, {"phishing"}));

  // Missing from the statuses, not installed, damaged, expired: each keeps the client from being ready.
  EXPECT_FALSE(ListsReady({Fresh("phishing")}, {"phishing", "malware"}, &unready));
  ASSERT_EQ(unready.size(), 1u);
  EXPECT_EQ(unready[0].name, "malware");
  EXPECT_EQ(unready[0].stale_reason, StaleReason::kNotInstalled);
  EXPECT_EQ(DescribeUnreadyLists(unready), "malware (not_installed)");
  EXPECT_FALSE(ListsReady({Stale("phishing", StaleReason::kDamaged), Stale("malware", StaleReason::kExpired),
                           Stale("adult", StaleReason::kNotInstalled)},
                          {"phishing", "malware", "adult"}, &unready));
  EXPECT_EQ(DescribeUnreadyLists(unready), "adult (not_installed), malware (expired), phishing (damaged)");
}

TEST(ListsReady, WithoutSubscriptionsEveryInstalledListAndAtLeastOne) {
  std::vector<ListStatus> unready;
  EXPECT_FALSE(ListsReady({}, {}, &unready));  // nothing installed yet
  EXPECT_TRUE(unready.empty());
  EXPECT_EQ(DescribeUnreadyLists(unready), "");
  EXPECT_TRUE(ListsReady({Fresh("phishing")}, {}));
  EXPECT_FALSE(ListsReady({Fresh("phishing"), Stale("malware", StaleReason::kExpired)}, {}, &unready));
  EXPECT_EQ(DescribeUnreadyLists(unready), "malware (expired)");
}

// Nothing syncs the directory: the wait ends at its timeout with the subscribed list named.
TEST(ClientWaitUntilReady, TimesOutNamingTheListsInTheWay) {
  ClientOptions o;
  o.data_dir = testing::ScratchDir("client-wait");
  o.lists = {"phishing"};
  o.watch = false;
  auto client = Client::Open(o);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  Status s = (*client)->WaitUntilReady(0);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.message(), "not ready after 0 ms: phishing (not_installed)");
  s = (*client)->WaitUntilReady(300);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ((*client)->WaitUntilReady(-1).code(), StatusCode::kInvalidArgument);
  o.lists.clear();
  auto unsubscribed = Client::Open(o);
  ASSERT_TRUE(unsubscribed.ok());
  EXPECT_EQ((*unsubscribed)->WaitUntilReady(0).message(), "not ready after 0 ms: no list installed");
}

// A refresh that fails (here: D made writable by others after Open, which every refresh re-checks) is named at
// the timeout, not hidden behind "not installed".
TEST(ClientWaitUntilReady, TimesOutNamingAFailedRefresh) {
  ClientOptions o;
  o.data_dir = testing::ScratchDir("client-wait-refused");
  o.lists = {"phishing"};
  o.watch = false;
  auto client = Client::Open(o);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  ASSERT_EQ(::chmod(o.data_dir.c_str(), 0777), 0);
  Status s = (*client)->WaitUntilReady(0);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("not ready after 0 ms: phishing (not_installed); the last refresh failed: "
                             "permission_denied: "),
            std::string::npos)
      << s.ToString();
}

}  // namespace
}  // namespace urlguard
