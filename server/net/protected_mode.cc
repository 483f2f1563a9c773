#include "server/net/protected_mode.h"

namespace kvlab {

bool IsLoopback(const boost::asio::ip::address& address) {
  if (address.is_v4()) return address.to_v4().is_loopback();
  const auto v6 = address.to_v6();
  if (v6.is_v4_mapped()) {
    return boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, v6).is_loopback();
  }
  return v6.is_loopback();
}

bool ProtectedModeRefuses(bool protected_mode, bool password_set,
                          const boost::asio::ip::address& peer) {
  return protected_mode && !password_set && !IsLoopback(peer);
}

}  // namespace kvlab
