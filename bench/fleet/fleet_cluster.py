"""The fleet under test: the local control plane (e2e/cluster.sh, KWOK nodes in two zones) with
the chart's CRDs and admission webhook, modelplane-operator, kube-scheduler's modelplane profile
calling modelplane-scheduler-extender, one modelplane-node-agent per node on this host, and two
bandwidth-capped origins in front of MinIO (e2e/throttling_proxy.py: a preferred one and a
fallback), whose own counters give the origin bytes.

The first node of each zone is a seed (label modelplane.io/fleet-role=seed): the peer tier
stages the revision there first; serving replicas go only to the others (role replica).

KWOK runs no containers: pods go Running without a process, so "Ready" here is the pod's Ready
condition with modelplane's weights-ready readiness gate True, which the node agent sets once
the revision is verified on the pod's node; no serving engine loads anything."""

import base64
import json
import os
import shlex
import shutil
import subprocess
import threading
import time
import urllib.request

from cpu_group import CpuGroup
from fleet_processes import Processes, free_port

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SEED_ROLE = "seed"
REPLICA_ROLE = "replica"
ROLE_LABEL = "modelplane.io/fleet-role"


def run(command, **options):
    return subprocess.run(command, check=True, text=True, capture_output=True, **options).stdout


def kubectl(*arguments, stdin=None):
    return run(["kubectl", *arguments], input=stdin)


def ensure_namespace(name):
    kubectl("apply", "-f", "-", stdin=f"apiVersion: v1\nkind: Namespace\nmetadata: {{name: {name}}}\n")


def wait_until(seconds, what, check, interval=0.5):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except (subprocess.CalledProcessError, OSError, ValueError):
            pass
        time.sleep(interval)
    raise TimeoutError(f"timed out after {seconds}s waiting for {what}")


def http_json(url, method="GET"):
    request = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None)
    with urllib.request.urlopen(request, timeout=10) as response:
        body = response.read()
    return json.loads(body) if body.strip().startswith(b"{") else body


class Origin:
    """MinIO behind one throttling proxy: the byte cap, the counter, and a switch to take it down."""

    def __init__(self, processes, name, upstream, cap_bytes_per_second, max_concurrent):
        self.name = name
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        processes.start(name, [os.path.join(ROOT, ".venv/bin/python"),
                               os.path.join(ROOT, "e2e/throttling_proxy.py"),
                               "--listen", f"127.0.0.1:{self.port}", "--upstream", upstream,
                               "--bytes-per-second", str(cap_bytes_per_second),
                               "--max-concurrent", str(max_concurrent)])
        wait_until(30, f"origin {name}", lambda: self.stats() is not None)

    def stats(self):
        return http_json(f"{self.url}/__proxy/stats")

    def reset(self):
        http_json(f"{self.url}/__proxy/reset", "POST")

    def down(self):
        """Closes every later connection unanswered and cuts the responses in flight."""
        http_json(f"{self.url}/__proxy/down?abort_in_flight=1", "POST")

    def up(self):
        http_json(f"{self.url}/__proxy/up", "POST")


class FleetCluster:
    def __init__(self, state, build, nodes, cap_bytes_per_second, max_concurrent):
        self.state = state
        self.build = build
        self.node_count = nodes
        self.cap = cap_bytes_per_second
        self.max_concurrent = max_concurrent
        # Beside the state folder, not in it: e2e/cluster.sh down takes the state folder away.
        self.logs = state + "-logs"
        self.processes = Processes(self.logs)
        # Named after the state folder, so that two fleets on one host keep groups of their own.
        self.agents_cpu = CpuGroup("modelplane-fleet-agents-" + os.path.basename(state.rstrip("/")))
        if self.agents_cpu.path:
            print(f"fleet: the node agents share one CPU group ({self.agents_cpu.path})", flush=True)
        else:
            print(f"fleet: the node agents are not grouped ({self.agents_cpu.why_not}): with many "
                  "agents busy the control plane gets little CPU", flush=True)
        self.operator_restarts = 0
        self.supervising = threading.Event()
        self.agent_admin_ports = {}
        self.share = os.path.join(state, "share")

    # --- bring-up ---------------------------------------------------------------------------
    def up(self):
        shutil.rmtree(self.state, ignore_errors=True)
        shutil.rmtree(self.logs, ignore_errors=True)
        os.makedirs(self.state)
        os.makedirs(self.logs)
        os.makedirs(self.share)
        self.extender_port = free_port()
        self.webhook_port = free_port()
        environment = dict(os.environ, MODELPLANE_E2E_STATE=self.state,
                           MODELPLANE_E2E_NODES=str(self.node_count),
                           MODELPLANE_EXTENDER_URL=f"http://127.0.0.1:{self.extender_port}/scheduler")
        cluster = os.path.join(ROOT, "e2e/cluster.sh")
        subprocess.run([cluster, "down"], env=environment, capture_output=True)
        run([cluster, "up"], env=environment)
        for line in run([cluster, "env"], env=environment).splitlines():
            if line.startswith("export "):
                key, _, value = line[len("export "):].partition("=")
                os.environ[key] = os.path.expandvars(shlex.split(value)[0]) if value else ""
        self._install_chart()
        self.nodes = kubectl("get", "nodes", "-l", "type=kwok", "-o",
                             "jsonpath={range .items[*]}{.metadata.name}{\"\\n\"}{end}").split()
        if len(self.nodes) != self.node_count:
            raise RuntimeError(f"expected {self.node_count} KWOK nodes, found {len(self.nodes)}")
        zones = {}
        for node in self.nodes:
            zone = kubectl("get", "node", node, "-o",
                           "jsonpath={.metadata.labels.topology\\.kubernetes\\.io/zone}")
            zones.setdefault(zone, []).append(node)
        self.seeds = [members[0] for members in zones.values()]
        self.replica_nodes = [node for node in self.nodes if node not in self.seeds]
        for node in self.nodes:
            role = SEED_ROLE if node in self.seeds else REPLICA_ROLE
            kubectl("label", "node", node, f"{ROLE_LABEL}={role}", "--overwrite")
        ensure_namespace("fleet")
        self.primary = Origin(self.processes, "origin-primary", os.environ["S3_ENDPOINT_URL"],
                              self.cap, self.max_concurrent)
        self.fallback = Origin(self.processes, "origin-fallback", os.environ["S3_ENDPOINT_URL"],
                               self.cap, self.max_concurrent)
        with open(os.path.join(self.state, "peer-token.key"), "w") as handle:
            handle.write(os.urandom(48).hex())
        self._start_operator()
        self._start_extender()

    def _install_chart(self):
        ensure_namespace("modelplane-system")
        run(["helm", "install", "modelplane", os.path.join(ROOT, "charts/modelplane"),
             "--namespace", "modelplane-system", "--set", "operator.enabled=false",
             "--set", "extender.enabled=false", "--set", "scheduler.enabled=false",
             "--set", "nodeAgent.enabled=false",
             "--set", f"operator.webhook.url=https://127.0.0.1:{self.webhook_port}",
             "--wait", "--timeout", "90s"])
        secret = json.loads(kubectl("get", "secret", "-n", "modelplane-system",
                                    "modelplane-modelplane-webhook-tls", "-o", "json"))
        for key, file in (("tls.crt", "webhook-tls.crt"), ("tls.key", "webhook-tls.key")):
            with open(os.path.join(self.state, file), "wb") as handle:
                handle.write(base64.b64decode(secret["data"][key]))

    def source_policy(self):
        stores = ", ".join(
            f'{{endpoint: "{origin.url}", buckets: [{os.environ["MODELPLANE_S3_BUCKET"]}], '
            f'nodeCredentials: true, addresses: [127.0.0.0/8]}}'
            for origin in (self.primary, self.fallback))
        return f"{{objectStores: [{stores}], sharedFilesystems: [{{root: {self.share}}}]}}"

    def _start_operator(self):
        config = os.path.join(self.state, "operator.yaml")
        with open(config, "w") as handle:
            handle.write(f"""admin: {{address: 127.0.0.1, port: 0}}
kubernetes: {{kubeconfig: {os.environ["KUBECONFIG"]}}}
# Longer than the defaults (15 s, 10 s): 34 agents, the control plane and the origins share two
# cores here, and a renewal stuck behind them would hand the lease over mid-cell.
leaderElection: {{namespace: modelplane-system, leaseDuration: 40s, renewDeadline: 30s, retryPeriod: 2s}}
webhook:
  enabled: true
  address: 127.0.0.1
  port: {self.webhook_port}
  certificateFile: {self.state}/webhook-tls.crt
  keyFile: {self.state}/webhook-tls.key
# The chart's seeder stall timeout (30 s), not e2e/admission.sh's 4 s (made for killing a
# seeder): on these two loaded cores a live seeder's bytes often show no progress for 4 s, the
# operator replaced it again and again, and each new seeder read the origin too (3.6 copies).
admission: {{enabled: true, interval: 1s, stepInterval: 2s, grantTtl: 30s, seederStallTimeout: 30s, wantedStreams: 8}}
sourcePolicy: {self.source_policy()}
""")
        self.operator_command = [os.path.join(self.build, "operator/modelplane-operator"),
                                 "--config", config]
        self.processes.start("modelplane-operator", self.operator_command)
        log = os.path.join(self.logs, "modelplane-operator.log")
        wait_until(60, "the operator to lead and serve the webhook",
                   lambda: all(event in open(log).read()
                               for event in ("leadership_acquired", "webhook_listening")))
        threading.Thread(target=self._supervise_operator, daemon=True).start()

    def _supervise_operator(self):
        """Starts the operator again when it exits, as kubelet restarts its container (an
        operator that loses its lease exits so that a fresh one campaigns)."""
        self.supervising.set()
        while self.supervising.is_set():
            time.sleep(1)
            if self.supervising.is_set() and not self.processes.alive("modelplane-operator"):
                self.processes.stop("modelplane-operator")
                self.operator_restarts += 1
                self.processes.start("modelplane-operator", self.operator_command)

    def _start_extender(self):
        config = os.path.join(self.state, "extender.yaml")
        with open(config, "w") as handle:
            handle.write(f"""admin: {{address: 127.0.0.1, port: 0}}
kubernetes: {{kubeconfig: {os.environ["KUBECONFIG"]}}}
""")
        self.processes.start("modelplane-scheduler-extender", [
            os.path.join(self.build, "scheduler-extender/modelplane-scheduler-extender"),
            "--config", config, "--address", "127.0.0.1", "--port", str(self.extender_port),
            "--path-prefix", "/scheduler"])

    # --- agents -----------------------------------------------------------------------------
    def start_agents(self):
        """One fresh agent per node with an empty cache: every cell starts from nothing but what
        it stages itself."""
        self.processes.stop(*[f"agent-{node}" for node in self.nodes])
        for node in self.nodes:
            folder = os.path.join(self.state, "agents", node)
            shutil.rmtree(folder, ignore_errors=True)
            os.makedirs(folder)
            admin_port = free_port()
            self.agent_admin_ports[node] = admin_port
            config = os.path.join(folder, "agent.yaml")
            with open(config, "w") as handle:
                handle.write(f"""nodeName: {node}
cacheRoot: {folder}/cache
admin: {{address: 127.0.0.1, port: {admin_port}}}
kubernetes: {{kubeconfig: {os.environ["KUBECONFIG"]}}}
statusInterval: 1s
fetch: {{rangeSize: 4Mi, inFlight: 8, bufferPool: 64Mi, rangeTimeout: 20s}}
admission:
  enabled: true
  safeStreams: 2
  startGrace: 10s
  telemetryWindow: 3s
  mediaProbe: 8Mi
  operatorLease: {{namespace: modelplane-system, name: modelplane-operator}}
eviction: {{enabled: false}}
peers:
  enabled: true
  listenAddress: 127.0.0.1
  port: {free_port()}
  advertiseAddress: 127.0.0.1
  plainHttp: true
  tokenKeyFile: {self.state}/peer-token.key
sourcePolicy: {self.source_policy()}
""")
            agent = self.processes.start(f"agent-{node}", [
                os.path.join(self.build, "node-agent/modelplane-node-agent"), "run", "--config", config])
            if self.agents_cpu.path and not self.agents_cpu.add(agent.pid):
                print(f"fleet: {self.agents_cpu.why_not}", flush=True)
        for node in self.nodes:
            log = os.path.join(self.logs, f"agent-{node}.log")
            wait_until(60, f"the agent on {node}",
                       lambda: open(log).read().count("node_agent_running") >= self.agent_starts(node))
        self._agent_generation = getattr(self, "_agent_generation", 0) + 1

    def agent_starts(self, node):
        """How many times node's agent was started so far, this one included."""
        return getattr(self, "_agent_generation", 0) + 1

    def agent_metrics(self, node):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.agent_admin_ports[node]}/metrics",
                                    timeout=10) as response:
            return response.read().decode()

    def down(self):
        self.supervising.clear()
        self.processes.stop()
        self.agents_cpu.remove()
        environment = dict(os.environ, MODELPLANE_E2E_STATE=self.state)
        subprocess.run([os.path.join(ROOT, "e2e/cluster.sh"), "down"], env=environment,
                       capture_output=True)
