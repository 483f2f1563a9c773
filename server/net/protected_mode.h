// Protected mode, as Redis 7.0 does it: while protected mode is on and no
// password is required, only loopback TCP clients and Unix-socket clients are
// served; any other client gets the DENIED reply below and is closed.
// (Redis 7.0 decides per client, whatever the bind address; a server bound to
// loopback simply never sees a non-loopback client.)
//
// Pure functions; thread-safe.
#pragma once

#include <string_view>

#include <boost/asio/ip/address.hpp>

namespace kvlab {

// Redis 7.0.15's reply to a refused client, byte for byte (typo included).
inline constexpr std::string_view kProtectedModeDenied =
    "-DENIED Redis is running in protected mode because protected mode is enabled and no "
    "password is set for the default user. In this mode connections are only accepted from "
    "the loopback interface. If you want to connect from external computers to Redis you may "
    "adopt one of the following solutions: 1) Just disable protected mode sending the command "
    "'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from "
    "the same host the server is running, however MAKE SURE Redis is not publicly accessible "
    "from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) "
    "Alternatively you can just disable the protected mode by editing the Redis configuration "
    "file, and setting the protected mode option to 'no', and then restarting the server. 3) "
    "If you started the server manually just for testing, restart it with the "
    "'--protected-mode no' option. 4) Setup a an authentication password for the default "
    "user. NOTE: You only need to do one of the above things in order for the server to start "
    "accepting connections from the outside.\r\n";

// 127.0.0.0/8, ::1 and IPv4-mapped 127.x.
bool IsLoopback(const boost::asio::ip::address& address);

// True when a TCP client from `peer` must be refused.
bool ProtectedModeRefuses(bool protected_mode, bool password_set,
                          const boost::asio::ip::address& peer);

}  // namespace kvlab
