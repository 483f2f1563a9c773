// PeekFirstKey(): the key of the first command waiting in a connection's
// input — the second element of a RESP array of bulk strings — found
// without parsing the command or copying anything, so an I/O thread can
// hint the engine (Engine::HintKey) before it gets to run the command.
// Returns nothing when the input does not start with a complete array of at
// least two elements whose first two are bulk strings (inline commands,
// partial input, a keyless command with no argument); it may return a
// command's first argument that is not a key (CONFIG GET's GET): a hint is
// only a hint.
//
// A pure function; thread-safe.
#pragma once

#include <optional>
#include <string_view>

namespace kvlab {

std::optional<std::string_view> PeekFirstKey(std::string_view input);

}  // namespace kvlab
