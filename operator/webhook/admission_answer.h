// The HTTP answer to an AdmissionReview: 200 whatever the verdict, as the API server expects,
// with the review of admission_review.h as its body. Apart from admission_review.h so the
// decision code and its fuzz target link no networking.
#pragma once

#include <string>

#include "core/http/router.h"
#include "operator/webhook/admission_review.h"

namespace modelplane::controller {

[[nodiscard]] inline core::ServerResponse AnswerAdmissionReview(const std::string& uid,
                                                                const AdmissionVerdict& verdict) {
  return core::ServerResponse::Text(boost::beast::http::status::ok,
                                    WriteAdmissionReview(uid, verdict), "application/json");
}

}  // namespace modelplane::controller
