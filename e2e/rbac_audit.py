#!/usr/bin/env python3
"""Compares what each modelplane component asked the API server for with what the Helm chart
grants its ServiceAccount: every request it made must have been allowed, and every grant must
have been used, unless NOT_EXERCISED below says why the end-to-end scenario cannot use it.

The requests come from kube-apiserver's audit log (JSON lines, Metadata level is enough; see
e2e/audit-policy.yaml), the grants from the chart as `helm template` renders it with default
values. e2e/scenario.sh runs the components with their ServiceAccounts' tokens and calls this
at its end.

    e2e/rbac_audit.py objects RENDERED.yaml      the chart's ServiceAccounts, RBAC and admission
                                                 policies only, as YAML for kubectl apply
    e2e/rbac_audit.py check --rendered RENDERED.yaml --audit-log audit.log
                          [--component operator --component node-agent --component extender]
                                                 prints each grant and what used it; exit 1 on a
                                                 refused request or an unused grant
"""
import argparse
import json
import sys
from collections import Counter
from dataclasses import dataclass, field

import yaml

COMPONENT_LABEL = "app.kubernetes.io/component"
DEFAULT_COMPONENTS = ("operator", "node-agent", "extender")
# What `objects` keeps: who the components are and what they may do, without their workloads
# (the scenario runs the binaries on the host, not in pods).
IDENTITY_KINDS = ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding",
                  "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding")

# Grants that the code uses on a path the end-to-end scenario does not take. Each stays granted
# (removing it would break that path) and stays listed here only while the chart grants it: an
# entry for a grant the chart no longer has fails the check. Key: (component, API group,
# resource[/subresource], verb).
NOT_EXERCISED = {
    # core/kube/event_recorder.cc: an Event recorded again with the same reason and note within
    # the recorder's window patches the first one's series. The operator's notes in the scenario
    # change between repeats (progress, node counts), so each is a new Event.
    ("operator", "events.k8s.io", "events", "patch"):
        "only a repeat of an identical Event within the recorder's window patches its series",
    # node_controller.cc RecordEvent: an Event on the node's ModelCache when the agent refuses a
    # staging (source policy, capacity) or evicts or purges a revision. The scenario's revisions
    # all fit and are allowed; tests/node-agent/eviction/cluster covers these paths (as admin).
    ("node-agent", "events.k8s.io", "events", "create"):
        "Events only for a refused staging or an eviction, which the scenario does not cause",
    ("node-agent", "events.k8s.io", "events", "patch"):
        "a repeat of such an Event within the recorder's window patches its series",
}

# Grants kube-apiserver checks inside admission, for another request, so the audit log holds
# that request and none for the grant itself: the CertificateApproval plugin checks "approve" on
# a request's signer when its approval is updated, CertificateSigning checks "sign" when its
# status (the certificate) is. Such a grant counts as used by each allowed request of that kind.
CHECKED_IN_ADMISSION = {
    ("certificates.k8s.io", "signers", "approve"):
        ("certificates.k8s.io", "certificatesigningrequests/approval", "update"),
    ("certificates.k8s.io", "signers", "sign"):
        ("certificates.k8s.io", "certificatesigningrequests/status", "update"),
}


@dataclass(frozen=True)
class Grant:
    """One (API group, resource, verb) a ServiceAccount holds through one role and binding."""
    role: str  # "ClusterRole/name" or "Role/namespace/name"
    namespace: str | None  # None: cluster-wide (bound by a ClusterRoleBinding)
    api_group: str
    resource: str  # "pods", or "pods/status" for a subresource
    verb: str
    resource_names: tuple = ()

    def key(self, component):
        return (component, self.api_group, self.resource, self.verb)

    def covers(self, request):
        if self.namespace is not None and request.namespace != self.namespace:
            return False
        if self.resource_names and request.name not in self.resource_names:
            return False
        return (self.api_group in ("*", request.api_group)
                and self.resource in ("*", request.resource)
                and (self.verb == "*" or self.verb in request.verbs()))

    def describe(self):
        where = f"in namespace {self.namespace}" if self.namespace is not None else "cluster-wide"
        names = f" named {','.join(self.resource_names)}" if self.resource_names else ""
        what = resource_text(self.api_group, self.resource)
        return f"{self.verb} {what}{names} {where} ({self.role})"


@dataclass(frozen=True)
class Request:
    """One API request as the audit log records it."""
    user: str
    verb: str
    api_group: str
    resource: str  # "" for a non-resource URL
    namespace: str
    name: str
    uri: str
    code: int
    forbidden_by: str  # "" when allowed; "RBAC: ..." or "admission: ..." when refused

    def verbs(self):
        """The verbs the API server authorized: a server-side apply that created its object
        (PATCH answered 201) was authorized as create too."""
        if self.verb == "patch" and self.code == 201:
            return ("patch", "create")
        return (self.verb,)

    def describe(self):
        if not self.resource:
            return f"{self.verb} {self.uri}"
        where = f" in namespace {self.namespace}" if self.namespace else ""
        name = f" {self.name}" if self.name else ""
        return f"{self.verb} {resource_text(self.api_group, self.resource)}{name}{where}"


@dataclass
class Report:
    lines: list = field(default_factory=list)
    failures: list = field(default_factory=list)

    def fail(self, text):
        self.failures.append(text)
        self.lines.append(f"  FAIL {text}")


def resource_text(api_group, resource):
    return f"{resource}.{api_group}" if api_group else resource


# --- the chart ------------------------------------------------------------------------------

def load_documents(text):
    return [doc for doc in yaml.safe_load_all(text) if isinstance(doc, dict) and doc.get("kind")]


def identity_objects(documents):
    return [doc for doc in documents if doc["kind"] in IDENTITY_KINDS]


def service_accounts(documents):
    """{component: "system:serviceaccount:NS:NAME"} from the chart's ServiceAccounts' labels."""
    accounts = {}
    for doc in documents:
        if doc["kind"] != "ServiceAccount":
            continue
        meta = doc["metadata"]
        component = (meta.get("labels") or {}).get(COMPONENT_LABEL)
        if component:
            accounts[component] = f"system:serviceaccount:{meta['namespace']}:{meta['name']}"
    return accounts


def grants_of(documents, username):
    """The grants the chart's bindings give USERNAME, and the roles they name that the chart
    does not define (built-in ones; their contents cannot be compared)."""
    roles = {}
    for doc in documents:
        if doc["kind"] == "ClusterRole":
            roles[("ClusterRole", None, doc["metadata"]["name"])] = doc
        elif doc["kind"] == "Role":
            roles[("Role", doc["metadata"]["namespace"], doc["metadata"]["name"])] = doc
    grants, foreign = [], []
    for doc in documents:
        if doc["kind"] not in ("ClusterRoleBinding", "RoleBinding"):
            continue
        if not any(subject_is(subject, username) for subject in doc.get("subjects") or []):
            continue
        ref = doc["roleRef"]
        is_role_binding = doc["kind"] == "RoleBinding"
        binding_namespace = doc["metadata"].get("namespace") if is_role_binding else None
        role_namespace = binding_namespace if ref["kind"] == "Role" else None
        role = roles.get((ref["kind"], role_namespace, ref["name"]))
        label = f"{ref['kind']}/{role_namespace + '/' if role_namespace else ''}{ref['name']}"
        if role is None:
            foreign.append(label)
            continue
        for rule in role.get("rules") or []:
            for api_group in rule.get("apiGroups") or []:
                for resource in rule.get("resources") or []:
                    for verb in rule.get("verbs") or []:
                        grants.append(Grant(label, binding_namespace, api_group, resource, verb,
                                            tuple(rule.get("resourceNames") or ())))
    return grants, foreign


def subject_is(subject, username):
    if subject.get("kind") != "ServiceAccount":
        return False
    return username == f"system:serviceaccount:{subject.get('namespace')}:{subject.get('name')}"


# --- the audit log --------------------------------------------------------------------------

def read_requests(lines):
    """Requests from audit events, one per auditID (a watch logs ResponseStarted and, when it
    ends, ResponseComplete; a watch still open when the log is read has only the first)."""
    by_id = {}
    lines = list(lines)
    for number, line in enumerate(lines, 1):
        line = line.strip()
        if not line:
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            if number == len(lines):
                continue  # the API server was writing the last line as it was read
            raise ValueError(f"audit log line {number} is not JSON: {line[:120]}")
        if event.get("kind") != "Event" or event.get("stage") == "RequestReceived":
            continue
        previous = by_id.get(event.get("auditID"))
        if previous is None or event.get("stage") == "ResponseComplete":
            by_id[event.get("auditID")] = event
    return [to_request(event) for event in by_id.values()]


def to_request(event):
    user = (event.get("impersonatedUser") or event.get("user") or {}).get("username", "")
    ref = event.get("objectRef") or {}
    resource = ref.get("resource", "")
    if resource and ref.get("subresource"):
        resource += "/" + ref["subresource"]
    code = int((event.get("responseStatus") or {}).get("code") or 0)
    annotations = event.get("annotations") or {}
    forbidden_by = ""
    if annotations.get("authorization.k8s.io/decision") == "forbid":
        reason = annotations.get("authorization.k8s.io/reason", "no rule allows it")
        forbidden_by = "RBAC: " + reason
    elif code == 403:
        detail = [f"{k}={v}" for k, v in sorted(annotations.items()) if "admission" in k]
        status = event.get("responseStatus") or {}
        forbidden_by = "admission: " + ("; ".join(detail) or status.get("message") or "denied")
    return Request(user=user, verb=event.get("verb", ""), api_group=ref.get("apiGroup", ""),
                   resource=resource, namespace=ref.get("namespace", ""), name=ref.get("name", ""),
                   uri=event.get("requestURI", ""), code=code, forbidden_by=forbidden_by)


# --- the comparison -------------------------------------------------------------------------

def check(documents, requests, components=DEFAULT_COMPONENTS, not_exercised=None):
    """Returns a Report: for each component, its grants and how often each was used."""
    not_exercised = NOT_EXERCISED if not_exercised is None else not_exercised
    report = Report()
    accounts = service_accounts(documents)
    for component in components:
        username = accounts.get(component)
        if username is None:
            report.lines.append(component)
            report.fail(f"{component}: the chart renders no ServiceAccount labelled "
                        f"{COMPONENT_LABEL}={component}")
            continue
        check_component(report, component, username, documents,
                        [r for r in requests if r.user == username], not_exercised)
    listed = {key for key in not_exercised if key[0] in components}
    for key in sorted(listed - granted_keys(documents, accounts, components)):
        report.fail(f"{key[0]}: NOT_EXERCISED lists {key[3]} {resource_text(key[1], key[2])}, "
                    "which the chart does not grant: remove the entry")
    return report


def granted_keys(documents, accounts, components):
    keys = set()
    for component in components:
        if component in accounts:
            keys |= {g.key(component) for g in grants_of(documents, accounts[component])[0]}
    return keys


def check_component(report, component, username, documents, requests, not_exercised):
    grants, foreign = grants_of(documents, username)
    report.lines.append(f"{component} ({username}): {len(requests)} requests, "
                        f"{len(grants)} grants")
    if not requests:
        report.fail(f"{component}: no request by {username} in the audit log; did it run with "
                    "its ServiceAccount's token?")
    for role in foreign:
        report.lines.append(f"  note: bound to {role}, which the chart does not define; "
                            "not compared")
    for grant in grants:
        if "*" in (grant.api_group, grant.resource, grant.verb):
            report.fail(f"{component}: {grant.describe()} is a wildcard; grant what the code calls")

    refused = Counter(r for r in requests if r.code == 403 or r.forbidden_by)
    for request, count in sorted(refused.items(), key=lambda item: item[0].describe()):
        report.fail(f"{component}: {request.describe()} was refused {count}x "
                    f"({request.forbidden_by or 'code 403'})")

    used = Counter()
    uncovered = Counter()
    for request in requests:
        if request.code == 403 or request.forbidden_by:
            continue
        covering = [g for g in grants if g.covers(request)] if request.resource else []
        for grant in covering:
            used[grant] += 1
        for grant in grants:
            if CHECKED_IN_ADMISSION.get((grant.api_group, grant.resource, grant.verb)) == (
                    request.api_group, request.resource, request.verb):
                used[grant] += 1
        if not covering:
            uncovered[request.describe()] += 1

    seen = set()
    for grant in sorted(grants, key=lambda g: (g.api_group, g.resource, g.verb, g.role)):
        if grant in seen:
            continue
        seen.add(grant)
        reason = not_exercised.get(grant.key(component))
        if used[grant]:
            note = " (listed in NOT_EXERCISED but used: the entry can go)" if reason else ""
            report.lines.append(f"  used {used[grant]:>6}x  {grant.describe()}{note}")
        elif reason:
            report.lines.append(f"  not exercised  {grant.describe()}: {reason}")
        else:
            report.fail(f"{component}: {grant.describe()} was never used; remove it from the "
                        "chart, or list it in NOT_EXERCISED (e2e/rbac_audit.py) with the reason")
    for text, count in sorted(uncovered.items()):
        # Allowed by what every authenticated user has (discovery, /version), not by the chart.
        report.lines.append(f"  outside the chart's grants, allowed {count}x: {text}")


# --- commands -------------------------------------------------------------------------------

def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    objects = commands.add_parser("objects", help="print the chart's identity and RBAC objects")
    objects.add_argument("rendered")
    run = commands.add_parser("check", help="compare the audit log with the chart's grants")
    run.add_argument("--rendered", required=True, help="helm template output, default values")
    run.add_argument("--audit-log", required=True)
    run.add_argument("--component", action="append", dest="components",
                     help=f"repeatable; default {', '.join(DEFAULT_COMPONENTS)}")
    args = parser.parse_args(argv)

    with open(args.rendered) as handle:
        documents = load_documents(handle.read())
    if args.command == "objects":
        yaml.safe_dump_all(identity_objects(documents), sys.stdout, sort_keys=False)
        return 0
    with open(args.audit_log) as handle:
        requests = read_requests(handle)
    report = check(documents, requests, tuple(args.components or DEFAULT_COMPONENTS))
    print("\n".join(report.lines))
    if report.failures:
        print(f"{len(report.failures)} problem(s):", file=sys.stderr)
        for failure in report.failures:
            print(f"  {failure}", file=sys.stderr)
        return 1
    print("every request was allowed and every grant was used (or is listed as not exercised)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
