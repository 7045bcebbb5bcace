#!/usr/bin/env python3
"""Revocation by digest on the scenario's running fleet (docs/eviction.md), asserted from the
outside: what peers answer, what pods say, what is left on disk and what status reports.

    e2e/revocation_check.py --state STATE --namespace NS --revision NAME --agent-binary BIN

1. Reads the revision and every other ModelRevision: the blobs only it references (those any
   other revision names stay, serving that one).
2. Control: a real peer client (`modelplane-node-agent fetch --peer ... --no-spec-sources`, as
   another node of the scenario: its certificate and a ticket for the file, signed with the
   peer CA as the operator signs them, e2e/peer_ticket.py) fetches the smallest of those blobs
   from a node holding the revision, and must succeed.
3. Applies a ModelRevocation of the revision's digest with force (pods use it: without force
   the purge waits for them), then waits, bounded, until
     - the same client is refused by every agent whose cache held the revision,
     - every pod in NS naming the revision has modelplane.io/weights-ready False,
     - no agent's store holds any of those blobs,
     - the revision's status.purge.nodesHolding is 0 and the revocation's phase is Purged,
   and prints how long each took. Exits 1 with what is still wrong otherwise.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

import yaml

import peer_ticket


def kubectl_json(*args):
    return json.loads(subprocess.check_output(["kubectl", *args, "-o", "json"]))


def agents(state):
    """(node, peer port, cache root) of each agent the scenario started."""
    for config_path in sorted(glob.glob(f"{state}/agents/*/agent.yaml")):
        with open(config_path) as handle:
            config = yaml.safe_load(handle)
        yield config["nodeName"], int(config["peers"]["port"]), config["cacheRoot"]


def blob_path(cache_root, sha256):
    return os.path.join(cache_root, "blobs", "sha256", sha256.removeprefix("sha256:"))


def peer_fetch(binary, state, manifest_path, node, port, client, ticket_for=""):
    """True when the peer served the file; the client's output otherwise. Over mutual TLS as
    `client` (a node of the scenario, with its own certificate and a ticket for the probe's file
    naming `ticket_for`, `client` by default, signed as the operator signs them: peers serve a
    node only what its ticket covers; None: no ticket), checking that the peer's certificate
    names its node."""
    with tempfile.TemporaryDirectory(prefix="revocation-fetch-") as cache_root:
        identity = f"{state}/agents/{client}/peer-identity/peer.pem"
        with open(manifest_path) as handle:
            digests = [f["sha256"] for f in json.load(handle)["spec"]["files"]]
        ticket_flags = []
        if ticket_for is not None:
            ticket_path = os.path.join(cache_root, "ticket")
            with open(ticket_path, "w") as handle:
                handle.write(peer_ticket.sign(f"{state}/peer-ca.key", ticket_for or client, digests))
            ticket_flags = ["--peer-ticket-file", ticket_path]
        result = subprocess.run(
            [binary, "fetch", "--revision", manifest_path, "--cache-root", cache_root,
             "--peer", f"127.0.0.1:{port}", "--no-spec-sources",
             "--peer-ca", f"{state}/peer-ca.crt", "--peer-node", node,
             "--peer-cert", identity, "--peer-key", identity, *ticket_flags,
             "--range-timeout", "10s"],
            capture_output=True, text=True, timeout=120)
    if result.returncode == 0:
        return True, ""
    return False, (result.stdout + result.stderr).strip().splitlines()[-3:] or ["(no output)"]


def pod_weights_ready(pod):
    for condition in pod.get("status", {}).get("conditions", []):
        if condition["type"] == "modelplane.io/weights-ready":
            return condition["status"], condition.get("reason", "")
    return "missing", ""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--state", required=True)
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--revision", required=True)
    parser.add_argument("--agent-binary", required=True)
    parser.add_argument("--timeout", type=float, default=90)
    args = parser.parse_args()

    revision = kubectl_json("get", "modelrevision", args.revision, "-n", args.namespace)
    digest = revision["status"]["digest"]
    own = {f["sha256"]: f for f in revision["spec"]["files"]}
    others = set()
    for item in kubectl_json("get", "modelrevisions", "-A")["items"]:
        # Only valid revisions can be stored; an invalid one (the scenario's llama-bad copies
        # most of llama-r1's files) holds nothing.
        if (item["metadata"]["namespace"], item["metadata"]["name"]) == (args.namespace, args.revision):
            continue
        if item.get("status", {}).get("digest") and item["status"].get("phase") != "Revoked":
            others.update(f["sha256"] for f in item["spec"]["files"])
    unique = {sha: f for sha, f in own.items() if sha not in others}
    if not unique:
        sys.exit(f"FAIL: every file of {args.revision} is shared with another revision")
    fleet = list(agents(args.state))
    holders = [(node, port, root) for node, port, root in fleet
               if all(os.path.exists(blob_path(root, sha)) for sha in unique)]
    if not holders:
        sys.exit(f"FAIL: no agent's store holds {args.revision}'s {len(unique)} unique blobs")

    # One small file of the revision, as its own manifest for the peer client.
    smallest = min(unique.values(), key=lambda f: f["size"])
    spec = dict(revision["spec"], files=[smallest])  # its sources go unused: --no-spec-sources
    spec.pop("prestage", None)
    manifest = {"apiVersion": "modelplane.io/v1alpha1", "kind": "ModelRevision",
                "metadata": {"name": f"{args.revision}-probe", "namespace": args.namespace},
                "spec": spec}
    manifest_path = os.path.join(args.state, "revocation-probe.json")
    with open(manifest_path, "w") as handle:
        json.dump(manifest, handle)
    client = next(node for node, _, _ in fleet if node != holders[0][0])
    served, output = peer_fetch(args.agent_binary, args.state, manifest_path, holders[0][0],
                                holders[0][1], client)
    if not served:
        sys.exit(f"FAIL: before the revocation, {holders[0][0]}'s peer server did not serve "
                 f"{smallest['path']}: {output}")
    print(f"  before: {holders[0][0]} served {smallest['path']} ({smallest['size']} bytes) to a "
          f"peer client; {len(holders)} of {len(fleet)} stores hold its {len(unique)} unique blobs")
    # Peer scope on the real agents: the same node without a ticket, or showing another node's,
    # is refused with the reason (docs/peer.md, "Peer scope").
    for ticket_for, reason in ((None, "PeerTicketMissing"), (holders[0][0], "PeerTicketForAnotherNode")):
        served, output = peer_fetch(args.agent_binary, args.state, manifest_path, holders[0][0],
                                    holders[0][1], client, ticket_for)
        if served or "403" not in " ".join(output) or reason not in " ".join(output):
            sys.exit(f"FAIL: peer scope: {client} with {'no ticket' if ticket_for is None else ticket_for + chr(39) + 's ticket'} "
                     f"was {'served' if served else 'refused otherwise'}: {output}")
        print(f"  peer scope: {client} refused ({reason}) {'without a ticket' if ticket_for is None else 'with ' + ticket_for + chr(39) + 's ticket'}")

    name = f"e2e-{args.revision}"
    revocation = {"apiVersion": "modelplane.io/v1alpha1", "kind": "ModelRevocation",
                  "metadata": {"name": name},
                  "spec": {"digest": digest, "reason": "e2e: revoked by digest", "force": True}}
    subprocess.run(["kubectl", "apply", "-f", "-"], input=json.dumps(revocation), text=True,
                   check=True, capture_output=True)
    started = time.monotonic()

    done = {}
    problems = {}
    while time.monotonic() - started < args.timeout:
        if "peers" not in done:
            still = []
            for node, port, _ in holders:
                served, output = peer_fetch(args.agent_binary, args.state, manifest_path, node, port,
                                            client)
                if served:
                    still.append(node)
                else:
                    refusal = output
            if still:
                problems["peers"] = f"still served by {still}"
            else:
                done["peers"] = (time.monotonic() - started, refusal)
        if "pods" not in done:
            pods = [p for p in kubectl_json("get", "pods", "-n", args.namespace)["items"]
                    if p["metadata"].get("annotations", {}).get("modelplane.io/revision") == args.revision]
            states = {p["metadata"]["name"]: pod_weights_ready(p) for p in pods}
            if pods and all(status == "False" for status, _ in states.values()):
                done["pods"] = (time.monotonic() - started, states)
            else:
                problems["pods"] = f"weights-ready: {states}"
        if "blobs" not in done:
            left = [(node, unique[sha]["path"]) for node, _, root in fleet for sha in unique
                    if os.path.exists(blob_path(root, sha))]
            if left:
                problems["blobs"] = f"still on disk: {left[:4]}{' ...' if len(left) > 4 else ''}"
            else:
                done["blobs"] = (time.monotonic() - started, None)
        if "status" not in done:
            status = kubectl_json("get", "modelrevision", args.revision, "-n", args.namespace).get("status", {})
            revoked = kubectl_json("get", "modelrevocation", name).get("status", {})
            holding = status.get("purge", {}).get("nodesHolding", -1)
            if (status.get("phase") == "Revoked" and holding == 0 and
                    status.get("revokedBy", {}).get("name") == name and
                    revoked.get("phase") == "Purged" and revoked.get("revisions", 0) >= 1):
                done["status"] = (time.monotonic() - started, revoked)
            else:
                problems["status"] = (f"revision phase {status.get('phase')}, nodesHolding "
                                      f"{holding}; revocation {revoked}")
        for key in done:
            problems.pop(key, None)
        if not problems:
            break
        time.sleep(0.5)
    if problems:
        for key, problem in problems.items():
            print(f"  not after {args.timeout:.0f} s: {key}: {problem}", file=sys.stderr)
        sys.exit(1)
    seconds, refusal = done["peers"]
    print(f"  {seconds:.1f} s: every holder refuses the blobs to peers (...{' '.join(refusal)[-140:]})")
    seconds, states = done["pods"]
    reasons = sorted({reason for _, reason in states.values()})
    print(f"  {seconds:.1f} s: weights-ready False on {len(states)} pods (reason {', '.join(reasons)})")
    print(f"  {done['blobs'][0]:.1f} s: no store holds any of the {len(unique)} unique blobs")
    seconds, revoked = done["status"]
    print(f"  {seconds:.1f} s: status purge.nodesHolding 0; ModelRevocation {name}: "
          f"{revoked['phase']}, {revoked['revisions']} revision(s)")


if __name__ == "__main__":
    main()
