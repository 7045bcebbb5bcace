#!/usr/bin/env python3
"""Makes KWOK's pods honour readiness gates the way the kubelet does.

KWOK's stock pod-ready stage marks every readiness gate condition True and the pod Ready at
once, which would make modelplane's `modelplane.io/weights-ready` gate meaningless in the e2e
cluster. This rewrites the stock stages (read from stdin, written to stdout): the pod-ready
stage no longer touches gate conditions and sets Ready only for pods without gates, and the
stage in pod-readiness-gates.yaml (appended) sets Ready once the gate condition is True.
The stock stages come from the pinned KWOK release (e2e/tools.sh); nothing of them is copied.
"""
import pathlib
import sys

text = sys.stdin.read()
gates_block = """      {{ range .spec.readinessGates }}
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: {{ .conditionType | Quote }}
      {{ end }}
"""
ready_condition = """      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Ready
"""
gated_ready_condition = """      - lastTransitionTime: {{ $now | Quote }}
        status: {{ if .spec.readinessGates }}"False"{{ else }}"True"{{ end }}
        type: Ready
"""
start = text.index("  name: pod-ready\n")
end = text.find("\n---", start)
end = len(text) if end < 0 else end
stage = text[start:end]
if gates_block not in stage or ready_condition not in stage:
    sys.exit("readiness-gates.py: KWOK's pod-ready stage changed shape; update this script")
stage = stage.replace(gates_block, "").replace(ready_condition, gated_ready_condition)
text = text[:start] + stage + text[end:]
extra = (pathlib.Path(__file__).parent / "pod-readiness-gates.yaml").read_text()
sys.stdout.write(text.rstrip("\n") + "\n" + extra)
