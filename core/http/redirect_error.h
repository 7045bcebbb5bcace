// The completion token of every awaited Asio/Beast operation in core: the operation's error lands
// in a variable the caller checks first, instead of an exception thrown out of the coroutine.
#pragma once

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/error_code.hpp>

namespace modelplane::core::http_internal {

[[nodiscard]] inline auto Redirect(boost::system::error_code& error) {
  return boost::asio::redirect_error(boost::asio::use_awaitable, error);
}

}  // namespace modelplane::core::http_internal
