// modelplane-operator: reconciles ModelRevision and ModelCache objects.
#include "core/runtime/component_main.h"
#include "operator/operator_app.h"

int main(int argc, char** argv) {
  return modelplane::core::RunComponentMain<modelplane::controller::OperatorConfig>(
      argc, argv, "operator", "modelplane operator: plans, stages and admits model revisions",
      modelplane::controller::RunOperator);
}
