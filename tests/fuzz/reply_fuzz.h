// SPDX-License-Identifier: GPL-2.0
// The libFuzzer entry of reply_fuzz.cpp: what ilactl does with the bytes of
// a netlink receive buffer. The unit tests call it too (without libFuzzer).
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size);
