#!/usr/bin/env python3
"""A stand-in kube-scheduler extender for the smoke test (Python stdlib only).

It proves the wiring that the real modelplane-scheduler-extender relies on: cluster.sh puts
MODELPLANE_EXTENDER_URL into the KubeSchedulerConfiguration and kube-scheduler calls
<url>/filter and <url>/prioritize for every pod. The stub passes every node, except that a pod
annotated `modelplane.io/e2e-deny-nodes: a,b` loses those nodes in filter, and it scores a node
higher when its name is in `modelplane.io/e2e-prefer-nodes`.

    extender_stub.py PORT_FILE    listens on a free 127.0.0.1 port, writes it to PORT_FILE

Every call is logged to stdout as one JSON line (verb, pod, nodes in, nodes out).
Wire format (k8s.io/kube-scheduler/extender/v1, Go field names, no json tags): ExtenderArgs
{Pod, Nodes, NodeNames}, ExtenderFilterResult {Nodes, NodeNames, FailedNodes, Error},
HostPriorityList [{Host, Score}].
"""

import http.server
import json
import sys

MAX_BODY = 64 << 20  # a NodeList of thousands of nodes stays far below this


def annotation_set(pod: dict, key: str) -> set[str]:
    value = ((pod.get("metadata") or {}).get("annotations") or {}).get(key, "")
    return {n.strip() for n in value.split(",") if n.strip()}


def node_names(args: dict) -> list[str]:
    if args.get("NodeNames") is not None:
        return list(args["NodeNames"])
    return [n["metadata"]["name"] for n in (args.get("Nodes") or {}).get("items") or []]


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            self.send_error(413)
            return
        args = json.loads(self.rfile.read(length) or b"{}")
        pod = args.get("Pod") or {}
        names = node_names(args)
        verb = self.path.rstrip("/").rsplit("/", 1)[-1]
        if verb == "filter":
            deny = annotation_set(pod, "modelplane.io/e2e-deny-nodes")
            keep = [n for n in names if n not in deny]
            result = {"FailedNodes": {n: "denied by e2e stub" for n in names if n in deny},
                      "Error": ""}
            if args.get("NodeNames") is not None:
                result["NodeNames"] = keep
            else:
                items = [n for n in args["Nodes"]["items"] if n["metadata"]["name"] in keep]
                result["Nodes"] = dict(args["Nodes"], items=items)
            out = keep
        elif verb == "prioritize":
            prefer = annotation_set(pod, "modelplane.io/e2e-prefer-nodes")
            result = [{"Host": n, "Score": 10 if n in prefer else 0} for n in names]
            out = [r["Host"] for r in result if r["Score"]]
        else:
            self.send_error(404)
            return
        meta = pod.get("metadata") or {}
        print(json.dumps({"verb": verb, "pod": f"{meta.get('namespace')}/{meta.get('name')}",
                          "nodes_in": names, "nodes_out": out}), flush=True)
        body = json.dumps(result).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args) -> None:  # the JSON line above is the log
        pass


def main() -> int:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(sys.argv[1], "w") as f:
        f.write(str(server.server_address[1]))
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
