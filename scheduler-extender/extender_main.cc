// modelplane-scheduler-extender: kube-scheduler HTTP extender scoring nodes by cached weights.
#include "core/runtime/component_main.h"
#include "scheduler-extender/extender_app.h"

int main(int argc, char** argv) {
  return modelplane::core::RunComponentMain<modelplane::extender::ExtenderConfig>(
      argc, argv, "scheduler-extender",
      "modelplane scheduler extender: places pods where their model weights are",
      modelplane::extender::RunExtender);
}
