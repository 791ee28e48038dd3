// SPDX-License-Identifier: GPL-2.0
// Running code in another network namespace (ip netns NAME) on the calling
// thread and coming back: sockets opened there stay there, so ila-syncd
// opens its netlink and status sockets in the map's namespace and talks
// to etcd from the one it was started in.
#pragma once

#include <functional>
#include <string>

namespace syncd {

// Runs FN with the calling thread in network namespace NAME (/run/netns/NAME;
// "" = the current one), then returns the thread to where it was, also
// when FN throws. Throws std::system_error naming the namespace.
void in_netns(const std::string &name, const std::function<void()> &fn);

} // namespace syncd
