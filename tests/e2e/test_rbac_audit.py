"""Checks e2e/rbac_audit.py, which the end-to-end scenario runs to compare what each component's
ServiceAccount asked the API server for (kube-apiserver's audit log) with what the chart grants
it: on a small chart render and audit log written here, and on the real chart's render when
Helm is built.

    .venv/bin/python -m pytest -q tests/e2e/test_rbac_audit.py
"""

import importlib.util
import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPEC = importlib.util.spec_from_file_location("rbac_audit", ROOT / "e2e" / "rbac_audit.py")
rbac_audit = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(rbac_audit)

NS = "mp"
OPERATOR = f"system:serviceaccount:{NS}:rel-operator"
AGENT = f"system:serviceaccount:{NS}:rel-agent"

CHART = f"""
apiVersion: v1
kind: ServiceAccount
metadata: {{name: rel-operator, namespace: {NS}, labels: {{app.kubernetes.io/component: operator}}}}
---
apiVersion: v1
kind: ServiceAccount
metadata: {{name: rel-agent, namespace: {NS}, labels: {{app.kubernetes.io/component: node-agent}}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: rel-operator, namespace: {NS}}}
spec: {{}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {{name: rel-operator, namespace: {NS}}}
rules:
  - apiGroups: ["coordination.k8s.io"]
    resources: ["leases"]
    verbs: ["get", "update"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {{name: rel-operator, namespace: {NS}}}
roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: Role, name: rel-operator}}
subjects: [{{kind: ServiceAccount, name: rel-operator, namespace: {NS}}}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {{name: rel-operator}}
rules:
  - apiGroups: [""]
    resources: ["pods"]
    verbs: ["list", "watch", "patch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {{name: rel-operator}}
roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: rel-operator}}
subjects: [{{kind: ServiceAccount, name: rel-operator, namespace: {NS}}}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {{name: rel-agent}}
rules:
  - apiGroups: [""]
    resources: ["pods/status"]
    verbs: ["patch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {{name: rel-agent}}
roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: rel-agent}}
subjects: [{{kind: ServiceAccount, name: rel-agent, namespace: {NS}}}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {{name: rel-agent-own-pods}}
spec: {{}}
"""

_ids = iter(range(1, 1_000_000))


def event(user, verb, resource="", namespace="", name="", group="", subresource="", code=200,
          stage="ResponseComplete", decision="allow", audit_id=None, uri="", extra=None):
    """One audit.k8s.io/v1 Event line at Metadata level, as kube-apiserver writes it."""
    body = {"kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "Metadata",
            "auditID": audit_id or f"id-{next(_ids)}", "stage": stage, "verb": verb,
            "requestURI": uri or f"/{resource}", "user": {"username": user},
            "responseStatus": {"metadata": {}, "code": code},
            "annotations": {"authorization.k8s.io/decision": decision,
                            "authorization.k8s.io/reason": "" if decision == "allow"
                            else "no RBAC policy matched"}}
    if resource:
        body["objectRef"] = {k: v for k, v in {"resource": resource, "namespace": namespace,
                                               "name": name, "apiGroup": group,
                                               "subresource": subresource}.items() if v}
    body.update(extra or {})
    return json.dumps(body)


def everything_used():
    """A log in which both ServiceAccounts use each of their grants once, all allowed."""
    return [
        event(OPERATOR, "get", "leases", NS, "lock", "coordination.k8s.io"),
        event(OPERATOR, "update", "leases", NS, "lock", "coordination.k8s.io"),
        event(OPERATOR, "list", "pods"),
        event(OPERATOR, "watch", "pods", stage="ResponseStarted"),
        event(OPERATOR, "patch", "pods", "team-a", "server-0"),
        event(AGENT, "patch", "pods", "team-a", "server-0", subresource="status"),
    ]


def run(lines, components=("operator", "node-agent"), not_exercised=None):
    documents = rbac_audit.load_documents(CHART)
    requests = rbac_audit.read_requests(lines)
    return rbac_audit.check(documents, requests, components, not_exercised or {})


def test_every_grant_used_and_every_request_allowed_passes():
    report = run(everything_used())
    assert report.failures == [], report.lines
    text = "\n".join(report.lines)
    assert "operator (system:serviceaccount:mp:rel-operator): 5 requests, 5 grants" in text
    assert "used      1x  patch pods/status cluster-wide (ClusterRole/rel-agent)" in text


def test_an_unused_grant_fails_naming_it():
    lines = [line for line in everything_used() if '"verb": "update"' not in line]
    report = run(lines)
    assert len(report.failures) == 1, report.failures
    assert ("update leases.coordination.k8s.io in namespace mp (Role/mp/rel-operator) "
            "was never used") in report.failures[0]


def test_a_refused_request_fails_with_the_reason():
    lines = everything_used() + [
        event(AGENT, "create", "modelcaches", name="node-1", group="modelplane.io", code=403,
              decision="forbid")]
    report = run(lines)
    assert len(report.failures) == 1, report.failures
    assert report.failures[0].startswith("node-agent: create modelcaches.modelplane.io node-1 "
                                         "was refused 1x (RBAC: no RBAC policy matched)")


def test_a_denial_by_an_admission_policy_fails_too():
    denied = event(AGENT, "patch", "pods", "team-a", "server-9", subresource="status", code=403,
                   extra={"annotations": {
                       "authorization.k8s.io/decision": "allow",
                       "validation.policy.admission.k8s.io/validation_failure":
                           "[{\"message\": \"own node only\"}]"}})
    report = run(everything_used() + [denied])
    assert len(report.failures) == 1, report.failures
    assert "was refused 1x (admission: validation.policy.admission.k8s.io/validation_failure=" \
        in report.failures[0]


def test_a_role_grant_counts_only_in_its_namespace():
    lines = [line for line in everything_used() if '"verb": "get"' not in line]
    # Allowed by something other than the chart (it would be a 403 with the chart alone).
    lines.append(event(OPERATOR, "get", "leases", "kube-system", "lock", "coordination.k8s.io"))
    report = run(lines)
    assert [f for f in report.failures if "get leases" in f and "never used" in f], report.failures
    assert any("outside the chart's grants, allowed 1x: get leases.coordination.k8s.io lock in "
               "namespace kube-system" in line for line in report.lines)


def test_a_subresource_is_its_own_grant():
    # The agent patches the pod itself, not pods/status: neither matches the other.
    lines = [line for line in everything_used() if '"subresource"' not in line]
    lines.append(event(AGENT, "patch", "pods", "team-a", "server-0"))
    report = run(lines)
    assert any("patch pods/status cluster-wide" in f and "never used" in f for f in report.failures)


def test_a_component_that_made_no_request_fails():
    lines = [line for line in everything_used() if AGENT not in line]
    report = run(lines)
    assert any("no request by system:serviceaccount:mp:rel-agent" in f for f in report.failures)


def test_an_allow_listed_grant_may_go_unused_with_its_reason():
    lines = [line for line in everything_used() if '"verb": "update"' not in line]
    reason = "only when another replica holds the lock"
    report = run(lines, not_exercised={
        ("operator", "coordination.k8s.io", "leases", "update"): reason})
    assert report.failures == [], report.failures
    assert any(line.endswith(reason) and "not exercised" in line for line in report.lines)


def test_an_allow_list_entry_for_a_grant_the_chart_lacks_fails():
    report = run(everything_used(), not_exercised={
        ("operator", "", "pods", "delete"): "no longer granted"})
    assert len(report.failures) == 1, report.failures
    assert "NOT_EXERCISED lists delete pods, which the chart does not grant" in report.failures[0]


def test_a_wildcard_grant_fails():
    chart = CHART.replace('verbs: ["list", "watch", "patch"]', 'verbs: ["*"]')
    documents = rbac_audit.load_documents(chart)
    report = rbac_audit.check(documents, rbac_audit.read_requests(everything_used()),
                              ("operator",), {})
    assert any("is a wildcard" in f for f in report.failures), report.failures


def test_a_watch_still_open_and_one_that_ended_count_once_each():
    lines = [
        event(OPERATOR, "watch", "pods", audit_id="w1", stage="ResponseStarted"),
        event(OPERATOR, "watch", "pods", audit_id="w1", stage="ResponseComplete"),
        event(OPERATOR, "watch", "pods", audit_id="w2", stage="ResponseStarted"),
    ]
    requests = rbac_audit.read_requests(lines)
    assert len(requests) == 2


def test_the_impersonated_user_is_the_one_checked():
    lines = [event("admin", "patch", "pods", "team-a", "server-0", subresource="status",
                   extra={"impersonatedUser": {"username": AGENT}})]
    requests = rbac_audit.read_requests(lines)
    assert [r.user for r in requests] == [AGENT]


def test_a_line_cut_off_at_the_end_is_skipped_and_one_in_the_middle_is_an_error():
    good = everything_used()
    assert len(rbac_audit.read_requests(good + ['{"kind": "Ev'])) == len(good)
    with pytest.raises(ValueError, match="line 2 is not JSON"):
        rbac_audit.read_requests([good[0], '{"kind": "Ev', good[1]])


def test_non_resource_requests_are_listed_not_matched():
    lines = everything_used() + [event(OPERATOR, "get", uri="/version")]
    report = run(lines)
    assert report.failures == []
    assert any("outside the chart's grants, allowed 1x: get /version" in line
               for line in report.lines)


def test_objects_keeps_identities_rbac_and_admission_policies_only():
    kinds = [doc["kind"] for doc in rbac_audit.identity_objects(rbac_audit.load_documents(CHART))]
    assert "Deployment" not in kinds
    assert kinds.count("ServiceAccount") == 2
    assert "ValidatingAdmissionPolicy" in kinds and "RoleBinding" in kinds


def test_the_command_exits_1_and_names_the_problem(tmp_path, capsys):
    rendered = tmp_path / "chart.yaml"
    rendered.write_text(CHART)
    log = tmp_path / "audit.log"
    log.write_text("\n".join(everything_used()[1:]) + "\n")
    code = rbac_audit.main(["check", "--rendered", str(rendered), "--audit-log", str(log),
                            "--component", "operator", "--component", "node-agent"])
    assert code == 1
    assert "get leases.coordination.k8s.io in namespace mp" in capsys.readouterr().err


def helm():
    found = shutil.which("helm")
    if found:
        return found
    bindir = subprocess.run([str(ROOT / "e2e" / "tools.sh"), "bindir"], capture_output=True,
                            text=True)
    candidate = Path(bindir.stdout.strip()) / "helm"
    return str(candidate) if bindir.returncode == 0 and candidate.exists() else None


def test_the_real_charts_allow_list_names_only_what_it_grants():
    binary = helm()
    if binary is None:
        pytest.skip("helm is not built (e2e/tools.sh build)")
    chart = str(ROOT / "charts" / "modelplane")
    rendered = subprocess.run([binary, "template", "modelplane", chart, "--namespace",
                               "modelplane-system"], capture_output=True, text=True,
                              check=True).stdout
    documents = rbac_audit.load_documents(rendered)
    accounts = rbac_audit.service_accounts(documents)
    assert set(rbac_audit.DEFAULT_COMPONENTS) <= set(accounts), accounts
    granted = rbac_audit.granted_keys(documents, accounts, rbac_audit.DEFAULT_COMPONENTS)
    assert set(rbac_audit.NOT_EXERCISED) <= granted, set(rbac_audit.NOT_EXERCISED) - granted
    for component in rbac_audit.DEFAULT_COMPONENTS:
        for grant in rbac_audit.grants_of(documents, accounts[component])[0]:
            assert "*" not in (grant.api_group, grant.resource, grant.verb), grant


def test_an_apply_that_created_its_object_uses_create_as_well():
    chart = CHART.replace('verbs: ["list", "watch", "patch"]',
                          'verbs: ["list", "watch", "patch", "create"]')
    documents = rbac_audit.load_documents(chart)
    lines = [line for line in everything_used() if '"verb": "patch"' not in line or AGENT in line]
    lines.append(event(OPERATOR, "patch", "pods", "team-a", "server-1", code=201))
    report = rbac_audit.check(documents, rbac_audit.read_requests(lines), ("operator",), {})
    assert report.failures == [], report.failures
    # Answered 200 (it existed), the same apply uses patch only.
    lines[-1] = event(OPERATOR, "patch", "pods", "team-a", "server-1", code=200)
    report = rbac_audit.check(documents, rbac_audit.read_requests(lines), ("operator",), {})
    assert [f for f in report.failures if "create pods cluster-wide" in f], report.failures


def test_a_signer_grant_is_used_by_the_request_admission_checks_it_for():
    # kube-apiserver checks "approve" and "sign" on the signer inside admission, when a
    # CertificateSigningRequest's approval or status is updated: those updates use the grant.
    chart = CHART.replace('''  - apiGroups: [""]
    resources: ["pods"]
    verbs: ["list", "watch", "patch"]''', '''  - apiGroups: [""]
    resources: ["pods"]
    verbs: ["list", "watch", "patch"]
  - apiGroups: ["certificates.k8s.io"]
    resources: ["certificatesigningrequests/approval", "certificatesigningrequests/status"]
    verbs: ["update"]
  - apiGroups: ["certificates.k8s.io"]
    resources: ["signers"]
    resourceNames: ["modelplane.io/peer"]
    verbs: ["approve", "sign"]''')
    documents = rbac_audit.load_documents(chart)
    approval = event(OPERATOR, "update", "certificatesigningrequests", name="csr-1",
                     group="certificates.k8s.io", subresource="approval")
    status = event(OPERATOR, "update", "certificatesigningrequests", name="csr-1",
                   group="certificates.k8s.io", subresource="status")
    report = rbac_audit.check(documents, rbac_audit.read_requests(
        everything_used() + [approval, status]), ("operator",), {})
    assert report.failures == [], report.failures
    # Without a signed certificate, "sign" was never checked: unused.
    report = rbac_audit.check(documents, rbac_audit.read_requests(
        everything_used() + [approval]), ("operator",), {})
    assert [f for f in report.failures if "sign signers.certificates.k8s.io" in f], report.failures
