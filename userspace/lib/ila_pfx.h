// SPDX-License-Identifier: GPL-2.0
// "ADDR/LEN" prefixes of the ILA command lines (ilactl hook src-pfx and
// dst-pfx, ip6tables -j ILA --src-pfx and --dst-pfx): one parser, header
// only so that the ip6tables plugin (not linked with ilactl's library)
// uses it too. Each caller words its own message from the result.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdint>
#include <string>
#include <string_view>

#include <common/ila_csum.h>

namespace ila {

enum class PfxError {
	Ok,
	NoLength,  // no "/"
	BadAddress,
	BadLength, // not decimal (no sign, no 0x, no leading zero), or > 128
	TooLong,   // > ILA_MAX_PFX_LEN (the locator)
	Zero,      // /0 would translate every address
	HostBits,  // bits set after the length
};

// Parses TEXT into ADDR (16 bytes) and LEN; ADDR is written as parsed
// even on HostBits, so that a message can show the network.
inline PfxError parse_pfx(std::string_view text, std::uint8_t addr[16], unsigned &len)
{
	auto slash = text.find('/');
	if (slash == std::string_view::npos)
		return PfxError::NoLength;
	std::string a(text.substr(0, slash));
	if (a.find('\0') != std::string::npos || inet_pton(AF_INET6, a.c_str(), addr) != 1)
		return PfxError::BadAddress;
	std::string_view l = text.substr(slash + 1);
	if (l.empty() || l.size() > 3 || (l.size() > 1 && l[0] == '0'))
		return PfxError::BadLength;
	unsigned n = 0;
	for (char c : l) {
		if (c < '0' || c > '9')
			return PfxError::BadLength;
		n = n * 10 + unsigned(c - '0');
	}
	if (n > 128)
		return PfxError::BadLength;
	len = n;
	if (n > ILA_MAX_PFX_LEN)
		return PfxError::TooLong;
	if (n == 0)
		return PfxError::Zero;
	if (!ila_pfx_host_bits_clear(addr, n))
		return PfxError::HostBits;
	return PfxError::Ok;
}

} // namespace ila
