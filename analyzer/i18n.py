"""Every string of tf-analyze's own wording, in English and Chinese (rule texts live in rules/):
the report's words, and the sentences that say what data a bundle lacks."""

from __future__ import annotations

import heapq
import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .bundle import Missing

LANGS = ("en", "zh")  # every text of a rule and of a report is in each

STRINGS: dict[str, dict[str, str]] = {
    "en": {
        "report_title": "TensorFusion support report",
        "collected": "Collected",
        "cluster": "Kubernetes",
        "tf": "TensorFusion",
        "namespace": "namespace",
        "release": "release",
        "version_unknown": "version unknown",
        "summary": "Summary",
        "root_causes": "root causes",
        "root_causes_one": "root cause",
        "consequences": "consequences",
        "consequences_one": "consequence",
        "notes": "notes",
        "notes_one": "note",
        "notes_title": "Notes",
        "notes_intro": "Expected or ignorable behaviour the manual describes; nothing to fix:",
        "note": "Note",
        "warning_events": "Warning events",
        "warning_events_one": "Warning event",
        "rules_summary": "%d rules: %d fired, %d passed, %d skipped, %d failed with an error.",
        "no_findings": "No problem found by the rules. If the cluster still misbehaves, attach this report and the bundle to a GitHub issue.",
        "root_cause": "Root cause",
        "consequence": "Consequence",
        "caused_by": "Caused by",
        "unchecked_causes": "Its cause may be unseen: these rules, which look for causes of it, failed with an error",
        "leads_to": "leads to %d consequences",
        "leads_to_one": "leads to %d consequence",
        "same_rule_more": "and %d more of the same rule:",
        "objects": "Objects",
        "manual_row": "Manual",
        "explanation": "What is wrong",
        "fix": "What to do",
        "decided_by": "Because",
        "evidence": "Evidence",
        "evidence_dropped": "Evidence (%d lines) left out to fit GitHub's issue size limit; see the HTML or JSON report.",
        "more_lines": "… and %d more lines; see the HTML or JSON report.",
        "more_rows": "… and %d more rows; see the HTML or JSON report.",
        "more_rows_bundle": "… and %d more rows; browse them with tf-analyze BUNDLE --serve and kubectl.",
        "trim_note": "This report was shortened to fit GitHub's issue size limit (65,536 characters); the HTML and JSON reports have everything. Left out:",
        "trim_evidence_lines": "%d evidence lines beyond the first 40 of a finding, and the ends of very long lines",
        "trim_evidence_dropped": "the evidence of the %d least important findings",
        "trim_view_rows": "%d rows of the kubectl views and the discovery chain",
        "trim_views_dropped": "the kubectl views and the discovery chain",
        "trim_list_rows": "%d rows of the lists of gaps, skipped rules and secrets",
        "trim_compact": "the explanations and commands of %d findings",
        "trim_details_dropped": "the details of each finding (the summary keeps every root cause and its fix)",
        "trim_grouped": "%d root causes of a rule already listed (merged into that rule's line)",
        "trim_hard_cut": "… cut at GitHub's issue size limit; see the HTML or JSON report.",
        "findings": "Findings",
        "cmp_title": "Compared with an earlier bundle",
        "cmp_intro": "Against %s, collected %s. A finding is the same when its rule, manual rows and objects are.",
        "cmp_fixed": "Fixed (only in the earlier bundle)",
        "cmp_new": "New (only in this bundle)",
        "cmp_remaining": "Remaining (in both)",
        "cmp_none": "none",
        "baseline": "Cluster at collection time",
        "baseline_intro": "The manual's baseline commands as kubectl printed them when the bundle was collected (%s); ages count from then.",
        "not_collected": "Not collected",
        "discovery": "GPU discovery chain",
        "discovery_intro": "Per GPU node: the Kubernetes Node, its GPUNode, its hypervisor pod, and the GPUs the hypervisor reported. The first broken link is where to look.",
        "no_gpu_nodes": "No GPU node in the bundle: no node has GPU labels or capacity, and there is no GPUNode, hypervisor or GPU.",
        "node": "GPU node",
        "link_node": "Node",
        "link_gpunode": "GPUNode",
        "link_hypervisor": "hypervisor",
        "link_gpus": "GPUs",
        "first_broken": "first broken link",
        "more_nodes": "… and %d more GPU nodes with a broken link",
        "state_ok": "ok",
        "state_waiting": "waiting",
        "state_broken": "broken",
        "state_unknown": "not collected",
        "reason_missing": "missing",
        "reason_not_labelled": "not labelled",
        "reason_not_ready": "not ready",
        "reason_not_running": "not Running",
        "reason_used_by_other": "used by another device plugin",
        "reason_not_collected": "not collected",
        "capacity": "GPU capacity",
        "capacity_intro": "Per pool and GPU node: the share still available of the total TFLOPS and VRAM (status of the GPUPool and GPUNode).",
        "no_capacity": "No GPUPool or GPUNode in the bundle.",
        "available_of": "%s of %s available",
        "capacity_unknown": "unknown (%s)",
        "timeline": "Timeline of Warning events",
        "timeline_intro": "From the first Warning event to the collection (%s). Each dot is one event; hover or tap for its message.",
        "timeline_newest": "The newest %d of %d Warning events.",
        "no_warnings": "No Warning events in the bundle.",
        "time": "Time",
        "count": "Count",
        "gaps": "What could not be collected",
        "no_gaps": "Everything the plan asked for was collected.",
        "no_gaps_absent": "Everything the plan asked for that the cluster has was collected.",
        "absent_intro": "Not in the cluster (the API answered that it does not exist):",
        "skipped_rules": "Rules skipped or failed",
        "no_skipped": "Every rule ran.",
        "rule": "Rule",
        "outcome": "Outcome",
        "reason": "Reason",
        "critical": "critical",
        "error": "error",
        "warning": "warning",
        "info": "info",
        "fired": "fired",
        "passed": "passed",
        "skipped": "skipped",
        "filter_severity": "Severity",
        "filter_section": "Section",
        "filter_all": "all",
        "search": "Search",
        "search_hint": "words in titles, objects, evidence…",
        "shown": "{shown} of {total} findings shown",
        "no_match": "No finding matches the filters.",
        "expand_all": "Expand all evidence",
        "collapse_all": "Collapse all",
        "copy": "Copy",
        "copied": "Copied",
        "generated_by": "Generated by",
        "section": "Section",
        "status": "Status",
        "what": "What",
        "message": "Message",
        "secrets_warning": "WARNING: this bundle still contains what looks like secrets. Do not post it or this report publicly; ask the customer to run `tf-collect redact` on it and rotate the exposed credentials.",
        "name": "Name",
        "contents": "Contents",
        "verdict": "Verdict",
        "verdict_problems": "problems found",
        "verdict_no-problem": "no problem found",
        "verdict_inconclusive": "inconclusive",
        "no_problem_hint": "If the cluster still misbehaves, attach this report and the bundle to a GitHub issue.",
        "inconclusive_why": "%d rules that could have found a problem could not run, so finding nothing here does not mean the cluster is healthy.",
        "missing": "Missing",
        "and_more": "… and %d more",
        "recollect": "Collect what they need with",
        "recollect_skipped": "Collect what the skipped rules need with",
        "collect_warned": "tf-collect warned",
        "skipped_fold": "%d rules skipped for data this bundle lacks (-v lists them).",
        "skipped_fold_one": "%d rule skipped for data this bundle lacks (-v lists it).",
        "legend": "Legend",
        "legend_consequence": "consequence of the root cause above",
        "cmp_short": "fixed %d, new %d, remaining %d",
        "issue_title": "Support bundle",
        "next_step": "Next step:",
        "next_bundle": "Bundle",
        "next_issue": "Open an issue with the report as its body, then drag the bundle into the issue:",
        "next_email": "Or email the bundle to your TensorFusion support contact.",
    },
    "zh": {
        "report_title": "TensorFusion 诊断报告",
        "collected": "收集时间",
        "cluster": "Kubernetes",
        "tf": "TensorFusion",
        "namespace": "命名空间",
        "release": "release",
        "version_unknown": "版本未知",
        "summary": "概要",
        "root_causes": "个根因",
        "root_causes_one": "个根因",
        "consequences": "个连带问题",
        "consequences_one": "个连带问题",
        "notes": "条说明",
        "notes_one": "条说明",
        "notes_title": "说明",
        "notes_intro": "手册里描述的预期或可忽略的现象，不需要修复：",
        "note": "说明",
        "warning_events": "条 Warning 事件",
        "warning_events_one": "条 Warning 事件",
        "rules_summary": "共 %d 条规则：%d 条命中，%d 条通过，%d 条跳过，%d 条出错。",
        "no_findings": "规则没有发现问题。如果集群仍然异常，请把这份报告和 bundle 附在 GitHub issue 里。",
        "root_cause": "根因",
        "consequence": "连带问题",
        "caused_by": "由此引起",
        "unchecked_causes": "真正的原因可能没有被发现：以下负责查找其原因的规则执行出错",
        "leads_to": "导致 %d 个连带问题",
        "leads_to_one": "导致 %d 个连带问题",
        "same_rule_more": "同一规则另有 %d 处：",
        "objects": "对象",
        "manual_row": "手册条目",
        "explanation": "问题",
        "fix": "处理",
        "decided_by": "依据",
        "evidence": "证据",
        "evidence_dropped": "为符合 GitHub issue 的长度限制，省略了证据（%d 行）；完整内容见 HTML 或 JSON 报告。",
        "more_lines": "… 另有 %d 行，见 HTML 或 JSON 报告。",
        "more_rows": "… 另有 %d 行，见 HTML 或 JSON 报告。",
        "more_rows_bundle": "… 另有 %d 行，可用 tf-analyze BUNDLE --serve 加 kubectl 查看。",
        "trim_note": "为符合 GitHub issue 的长度限制（65,536 个字符），这份报告做了删减；HTML 和 JSON 报告是完整的。省略的内容：",
        "trim_evidence_lines": "每个问题前 40 行之后的 %d 行证据，以及超长行的末尾",
        "trim_evidence_dropped": "最不重要的 %d 个问题的证据",
        "trim_view_rows": "kubectl 视图和发现链中的 %d 行",
        "trim_views_dropped": "kubectl 视图和发现链",
        "trim_list_rows": "未收集数据、跳过的规则和疑似密钥列表中的 %d 行",
        "trim_compact": "%d 个问题的说明和命令",
        "trim_details_dropped": "每个问题的详细内容（概要里保留了每个根因及其处理方法）",
        "trim_grouped": "已列出的规则的另外 %d 个根因（合并到该规则那一行）",
        "trim_hard_cut": "… 已在 GitHub issue 的长度限制处截断，完整内容见 HTML 或 JSON 报告。",
        "findings": "发现的问题",
        "cmp_title": "与之前的 bundle 对比",
        "cmp_intro": "对比 %s（收集时间 %s）。规则、手册条目和对象都相同的问题视为同一个问题。",
        "cmp_fixed": "已修复（只在之前的 bundle 里）",
        "cmp_new": "新出现（只在这个 bundle 里）",
        "cmp_remaining": "仍然存在（两个 bundle 里都有）",
        "cmp_none": "无",
        "baseline": "收集时的集群状态",
        "baseline_intro": "手册里的基本命令，即收集 bundle 时（%s）kubectl 的输出；时长从那时算起。",
        "not_collected": "未收集",
        "discovery": "GPU 发现链",
        "discovery_intro": "每个 GPU 节点：Kubernetes Node、它的 GPUNode、它的 hypervisor Pod，以及 hypervisor 上报的 GPU。从第一个断开的环节查起。",
        "no_gpu_nodes": "bundle 里没有 GPU 节点：没有节点带 GPU 标签或 GPU 容量，也没有 GPUNode、hypervisor 或 GPU。",
        "node": "GPU 节点",
        "link_node": "Node",
        "link_gpunode": "GPUNode",
        "link_hypervisor": "hypervisor",
        "link_gpus": "GPU",
        "first_broken": "第一个断开的环节",
        "more_nodes": "… 另有 %d 个 GPU 节点的发现链断开",
        "state_ok": "正常",
        "state_waiting": "等待",
        "state_broken": "断开",
        "state_unknown": "未收集",
        "reason_missing": "不存在",
        "reason_not_labelled": "缺少标签",
        "reason_not_ready": "未就绪",
        "reason_not_running": "不是 Running",
        "reason_used_by_other": "被其他设备插件占用",
        "reason_not_collected": "未收集",
        "capacity": "GPU 容量",
        "capacity_intro": "每个资源池和 GPU 节点：TFLOPS 和显存总量中仍可用的部分（取自 GPUPool 和 GPUNode 的 status）。",
        "no_capacity": "bundle 里没有 GPUPool 或 GPUNode。",
        "available_of": "可用 %s / 共 %s",
        "capacity_unknown": "未知（%s）",
        "timeline": "Warning 事件时间线",
        "timeline_intro": "从第一条 Warning 事件到收集时（%s）。每个点是一条事件，悬停或点按可查看内容。",
        "timeline_newest": "最新的 %d 条 Warning 事件（共 %d 条）。",
        "no_warnings": "bundle 里没有 Warning 事件。",
        "time": "时间",
        "count": "次数",
        "gaps": "未能收集的数据",
        "no_gaps": "计划中的数据都已收集。",
        "no_gaps_absent": "计划中集群里存在的数据都已收集。",
        "absent_intro": "集群里没有（API 答复不存在）：",
        "skipped_rules": "跳过或出错的规则",
        "no_skipped": "所有规则都已执行。",
        "rule": "规则",
        "outcome": "结果",
        "reason": "原因",
        "critical": "严重",
        "error": "错误",
        "warning": "警告",
        "info": "信息",
        "fired": "命中",
        "passed": "通过",
        "skipped": "跳过",
        "filter_severity": "严重程度",
        "filter_section": "小节",
        "filter_all": "全部",
        "search": "搜索",
        "search_hint": "标题、对象、证据中的文字…",
        "shown": "显示 {shown} / {total} 个问题",
        "no_match": "没有符合筛选条件的问题。",
        "expand_all": "展开全部证据",
        "collapse_all": "全部收起",
        "copy": "复制",
        "copied": "已复制",
        "generated_by": "生成工具",
        "section": "小节",
        "status": "状态",
        "what": "内容",
        "message": "信息",
        "secrets_warning": "警告：这个 bundle 里仍然有疑似密钥的内容。不要公开发布它或这份报告；请用户对它执行 `tf-collect redact`，并轮换已暴露的凭据。",
        "name": "名称",
        "contents": "目录",
        "verdict": "结论",
        "verdict_problems": "发现问题",
        "verdict_no-problem": "没有发现问题",
        "verdict_inconclusive": "无法下结论",
        "no_problem_hint": "如果集群仍然异常，请把这份报告和 bundle 附在 GitHub issue 里。",
        "inconclusive_why": "有 %d 条本可能发现问题的规则没能运行：这里没有发现问题，不代表集群是健康的。",
        "missing": "缺少",
        "and_more": "… 另有 %d 项",
        "recollect": "用这条命令收集它们需要的数据",
        "recollect_skipped": "用这条命令收集被跳过的规则需要的数据",
        "collect_warned": "tf-collect 的警告",
        "skipped_fold": "%d 条规则因为 bundle 缺少数据而跳过（加 -v 逐条列出）。",
        "skipped_fold_one": "%d 条规则因为 bundle 缺少数据而跳过（加 -v 列出）。",
        "legend": "图例",
        "legend_consequence": "上面那个根因导致的后果",
        "cmp_short": "已修复 %d，新出现 %d，仍然存在 %d",
        "issue_title": "诊断 bundle",
        "next_step": "下一步：",
        "next_bundle": "Bundle",
        "next_issue": "用报告作为正文创建 issue，然后把 bundle 拖进这个 issue 里：",
        "next_email": "或者把 bundle 通过邮件发给你的 TensorFusion 支持联系人。",
    },
}


# What a bundle lacks (`bundle.Missing`): one sentence per kind, filled with its params.
MISSING: dict[str, dict[str, str]] = {
    "en": {
        "not_collected": "{what}{in_namespace} was not collected",
        "collection_failed": "{what}{in_namespace}: {status} ({detail})",
        "document_missing": "{document} data was not collected: {status} ({detail})",
        "check_not_run": "check {check} was not run (tf-collect --exec runs it)",
        "check_failed": "check {check}: {status} ({detail})",
        "logs_not_collected": "logs were not collected",
        "logs_failed": "logs: {status} ({detail})",
        "previous_logs_failed": "logs (previous): {status} ({detail})",
        "in_namespace": " in {namespace}",
        "for_objects": "{missing}: {objects}",
        "and_more": "{objects} and {count:,} more",
        "more_kinds": "{count} more kinds of missing data",
        "separator": "; ",
    },
    "zh": {
        "not_collected": "没有收集 {what}{in_namespace}",
        "collection_failed": "{what}{in_namespace}：{status}（{detail}）",
        "document_missing": "没有收集 {document} 数据：{status}（{detail}）",
        "check_not_run": "检查 {check} 没有运行（tf-collect --exec 会运行它）",
        "check_failed": "检查 {check}：{status}（{detail}）",
        "logs_not_collected": "没有收集日志",
        "logs_failed": "日志：{status}（{detail}）",
        "previous_logs_failed": "上一次运行的日志：{status}（{detail}）",
        "in_namespace": "（命名空间 {namespace}）",
        "for_objects": "{missing}：{objects}",
        "and_more": "{objects} 等另外 {count:,} 个",
        "more_kinds": "另有 {count} 种缺失的数据",
        "separator": "；",
    },
}


# What runs and the known bugs of it: the header's lines, the notes on disagreeing witnesses
# (analyzer/running.py, Note.kind) and the words a known-issue finding is dressed in
# (analyzer/rules/known.py).
VERSIONS: dict[str, dict[str, str]] = {
    "en": {
        "running": "What runs",
        "start-line": "start line",
        "image-tag": "image tag",
        "image-id": "image the node resolved",
        "tf-config": "TensorFusion config",
        "helm-values": "Helm values",
        "helm-chart": "chart default",
        "helm-app-version": "chart appVersion",
        "component": "{name} {version} ({source})",
        "floating": "{name} unknown ({tag}{pulled}{digest})",
        "pulled": ", pulled {date}",
        "digest": ", digest {digest}",
        "unknown": "{name} unknown",
        "commit": "; its start line names only commit {commit}",
        "commit_release": "; its start line names only commit {commit} ({release})",
        "chart": "Helm chart {chart} (appVersion {app_version})",
        "no_chart": "no Helm release in the bundle",
        "chart_pins_older": "chart {chart} (appVersion {app_version}) runs operator {operator}: the chart pins an older operator",
        "chart_pins_other": "chart {chart} (appVersion {app_version}) runs operator {operator}: the chart pins that operator",
        "values_pin_operator": "chart {chart} (appVersion {app_version}) runs operator {operator}: the release's values set controller.image.tag",
        "upgraded_by_the_book": "chart {chart} (appVersion {app_version}) runs operator {operator}: expected after the v1 -> v2 upgrade done by the book, which leaves helm list on the old chart",
        "operator_not_chart": "chart {chart} (appVersion {app_version}) runs operator {operator}: the operator image was changed outside Helm",
        "chart_keeps_old_hypervisor": "hypervisor {hypervisor} is older than operator {operator}: chart {chart} keeps hypervisor {hypervisor} (cluster.hypervisorImage)",
        "hypervisor_older": "hypervisor {hypervisor} is older than operator {operator}",
        "pods_disagree": "{component} pods run different versions: {versions}",
        "start_line_not_tag": "{component} logged version {logged} but its image tag says {tag} ({where})",
        "known_issues": "Known issues of this version",
        "known_issues_intro": "Bugs of the version that runs, fixed in a later release. This bundle shows no sign of them; upgrade before they bite:",
        "section": "Known TensorFusion bugs",
        "not_fixed": "not fixed on the {line} line",
        "title_affected": "{title} (known bug of {component} {version}, fixed in {fixed})",
        "title_open": "{title} (known bug of {component} {version}, {not_fixed})",
        "title_unknown": "{title} (known bug of {component} before {fixed}; the running version is unknown)",
        "explain_affected": "{component} {version} (read from the {source}) is in the affected range {range} of this known TensorFusion bug, fixed by {prs}.",
        "explain_unknown": "This is how a known TensorFusion bug shows (fixed by {prs}, affected: {ranges}), but the {component} version could not be determined: {why}. Find it with: {how}",
        "fix_upgrade": "Upgrade to {fixed} (chart {chart}), the first release with the fix.",
        "fix_upgrade_image": "Upgrade the operator to {fixed}, the first release with the fix (no chart deploys it by default, so the command sets the image).",
        "fix_crosses": "Chart {chart} installs the v2 line: upgrade by the v1 -> v2 guide, not a plain helm upgrade.",
        "fix_open": "It is not fixed on the {line} line yet.",
        "note_line": "{component} {version} is in {range}; fixed in {fixed}",
        "note_line_open": "{component} {version} is in {range}",
        "then": ". ",
        "how_operator": "kubectl logs -n {namespace} -l tensor-fusion.ai/component=operator -c controller | grep -m1 'version:'",
        "how_chart": "helm list -n {namespace}",
    },
    "zh": {
        "running": "运行的版本",
        "start-line": "启动日志",
        "image-tag": "镜像标签",
        "image-id": "节点解析出的镜像",
        "tf-config": "TensorFusion 配置",
        "helm-values": "Helm values",
        "helm-chart": "chart 默认值",
        "helm-app-version": "chart appVersion",
        "component": "{name} {version}（{source}）",
        "floating": "{name} 版本未知（{tag}{pulled}{digest}）",
        "pulled": "，拉取于 {date}",
        "digest": "，digest {digest}",
        "unknown": "{name} 版本未知",
        "commit": "；其启动日志只给出 commit {commit}",
        "commit_release": "；其启动日志只给出 commit {commit}（{release}）",
        "chart": "Helm chart {chart}（appVersion {app_version}）",
        "no_chart": "bundle 中没有 Helm release",
        "chart_pins_older": "chart {chart}（appVersion {app_version}）运行的是 operator {operator}：该 chart 固定了更旧的 operator",
        "chart_pins_other": "chart {chart}（appVersion {app_version}）运行的是 operator {operator}：该 chart 固定了这个 operator",
        "values_pin_operator": "chart {chart}（appVersion {app_version}）运行的是 operator {operator}：release 的 values 设置了 controller.image.tag",
        "upgraded_by_the_book": "chart {chart}（appVersion {app_version}）运行的是 operator {operator}：按官方 v1 -> v2 升级流程升级后就是这样，helm list 仍显示旧 chart",
        "operator_not_chart": "chart {chart}（appVersion {app_version}）运行的是 operator {operator}：operator 镜像是在 Helm 之外改的",
        "chart_keeps_old_hypervisor": "hypervisor {hypervisor} 比 operator {operator} 旧：chart {chart} 的 hypervisor 仍是 {hypervisor}（cluster.hypervisorImage）",
        "hypervisor_older": "hypervisor {hypervisor} 比 operator {operator} 旧",
        "pods_disagree": "{component} 的各个 Pod 运行不同版本：{versions}",
        "start_line_not_tag": "{component} 启动日志的版本是 {logged}，镜像标签却是 {tag}（{where}）",
        "known_issues": "此版本的已知问题",
        "known_issues_intro": "正在运行的版本有这些已在后续版本修复的缺陷。本 bundle 中还没有它们的迹象；请在出问题之前升级：",
        "section": "TensorFusion 已知缺陷",
        "not_fixed": "{line} 线尚未修复",
        "title_affected": "{title}（{component} {version} 的已知缺陷，{fixed} 已修复）",
        "title_open": "{title}（{component} {version} 的已知缺陷，{not_fixed}）",
        "title_unknown": "{title}（{fixed} 之前的 {component} 的已知缺陷；运行的版本未知）",
        "explain_affected": "{component} {version}（来自{source}）在这个 TensorFusion 已知缺陷的受影响范围 {range} 内，修复见 {prs}。",
        "explain_unknown": "这与一个 TensorFusion 已知缺陷的表现一致（修复见 {prs}，受影响：{ranges}），但无法确定 {component} 的版本：{why}。查看版本：{how}",
        "fix_upgrade": "升级到 {fixed}（chart {chart}），第一个包含修复的版本。",
        "fix_upgrade_image": "把 operator 升级到 {fixed}，第一个包含修复的版本（没有哪个 chart 默认部署它，所以命令里直接指定镜像）。",
        "fix_crosses": "chart {chart} 安装的是 v2 线：请按 v1 -> v2 升级指南升级，不要直接 helm upgrade。",
        "fix_open": "{line} 线尚未修复。",
        "note_line": "{component} {version} 在 {range} 内；{fixed} 已修复",
        "note_line_open": "{component} {version} 在 {range} 内",
        "then": "。",
        "how_operator": "kubectl logs -n {namespace} -l tensor-fusion.ai/component=operator -c controller | grep -m1 'version:'",
        "how_chart": "helm list -n {namespace}",
    },
}


def version_text(kind: str, lang: str, **params: object) -> str:
    """One of the VERSIONS sentences in `lang`, filled in."""
    return VERSIONS[lang][kind].format(**params)


def missing_text(missing: Missing, lang: str = "en") -> str:
    """One sentence saying what is missing, in `lang`."""
    words = MISSING[lang]
    params = dict(missing.params)
    namespace = params.pop("namespace", "")
    in_namespace = words["in_namespace"].format(namespace=namespace) if namespace else ""
    return words[missing.kind].format(in_namespace=in_namespace, **params)


def gaps_text(gaps: Iterable[tuple[Missing, str]], lang: str = "en", shown: int = 3) -> str:
    """Why a rule was skipped: one clause per kind of missing data, each with the objects it
    was missing for (`check X was not run (...): ns/a, ns/b, ns/c and 9,997 more`)."""
    words = MISSING[lang]
    where: dict[str, set[str]] = {}
    for missing, obj in gaps:
        objects = where.setdefault(missing_text(missing, lang), set())
        if obj:
            objects.add(obj)
    clauses = []
    for message in sorted(where)[:shown]:
        objects = where[message]
        if not objects:
            clauses.append(message)
            continue
        listed = ", ".join(heapq.nsmallest(shown, objects))
        if len(objects) > shown:
            listed = words["and_more"].format(objects=listed, count=len(objects) - shown)
        clauses.append(words["for_objects"].format(missing=message, objects=listed))
    if len(where) > shown:
        clauses.append(words["more_kinds"].format(count=len(where) - shown))
    return words["separator"].join(clauses)


class Strings:
    """One language's table for templates: `t.copy` must be the word, never `dict.copy`."""

    __slots__ = ("_table",)

    def __init__(self, table: dict[str, str]) -> None:
        self._table = table

    def __getattr__(self, name: str) -> str:
        try:
            return self._table[name]
        except KeyError:
            raise AttributeError(name) from None

    def __getitem__(self, name: str) -> str:
        return self._table[name]

    def __contains__(self, name: object) -> bool:
        return name in self._table

    def plural(self, n: int, name: str) -> str:
        """The word for `n` things: `name_one` for one where the language has it."""
        return self._table.get(f"{name}_one", self._table[name]) if n == 1 else self._table[name]


def default_lang(environ: dict[str, str] | None = None) -> str:
    """zh when the locale (LC_ALL, LC_MESSAGES, LANG) is Chinese, else en."""
    env = os.environ if environ is None else environ
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(var)
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"
