// The HTML report's only script. Static: no bundle text is ever inside it (the report's
// Content-Security-Policy allows this script by its hash and nothing else). Words it shows
// come from data- attributes, escaped like the rest of the page.
(function () {
  "use strict";
  var body = document.body;
  var findings = Array.prototype.slice.call(document.querySelectorAll("article.finding"));
  var sevBoxes = Array.prototype.slice.call(document.querySelectorAll("input[name=severity]"));
  var section = document.getElementById("f-section");
  var text = document.getElementById("f-text");
  var shown = document.getElementById("f-shown");
  var noMatch = document.getElementById("no-match");

  function apply() {
    var wanted = {};
    sevBoxes.forEach(function (box) { wanted[box.value] = box.checked; });
    var q = text.value.trim().toLowerCase();
    var count = 0;
    findings.forEach(function (el) {
      var show = wanted[el.dataset.severity] === true &&
        (!section.value || el.dataset.section === section.value) &&
        (!q || el.textContent.toLowerCase().indexOf(q) !== -1);
      el.hidden = !show;
      if (show) {
        count += 1;
        if (q) {
          el.querySelectorAll("details.evidence").forEach(function (d) {
            if (d.textContent.toLowerCase().indexOf(q) !== -1) { d.open = true; }
          });
        }
      }
    });
    shown.textContent = body.dataset.shown
      .replace("{shown}", String(count)).replace("{total}", String(findings.length));
    noMatch.hidden = count !== 0 || findings.length === 0;
  }

  sevBoxes.forEach(function (box) { box.addEventListener("change", apply); });
  section.addEventListener("change", apply);
  text.addEventListener("input", apply);

  function setAll(open) {
    document.querySelectorAll("details.evidence").forEach(function (d) { d.open = open; });
  }
  document.getElementById("expand-all").addEventListener("click", function () { setAll(true); });
  document.getElementById("collapse-all").addEventListener("click", function () { setAll(false); });

  function copyText(value) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(value);
    }
    return new Promise(function (resolve, reject) {
      var area = document.createElement("textarea");
      area.value = value;
      area.setAttribute("readonly", "");
      area.style.position = "fixed";
      area.style.opacity = "0";
      body.appendChild(area);
      area.select();
      var ok = false;
      try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
      body.removeChild(area);
      if (ok) { resolve(); } else { reject(new Error("copy refused")); }
    });
  }

  document.querySelectorAll("button.copy").forEach(function (btn) {
    var label = btn.textContent;
    btn.addEventListener("click", function () {
      copyText(btn.dataset.copy).then(function () {
        btn.textContent = body.dataset.copied;
        btn.classList.add("done");
        window.setTimeout(function () { btn.textContent = label; btn.classList.remove("done"); }, 1500);
      }, function () {
        // No clipboard (a locked-down browser): select the command so Ctrl-C copies it.
        var pre = btn.parentNode.querySelector("pre");
        var range = document.createRange();
        range.selectNodeContents(pre);
        var sel = window.getSelection();
        sel.removeAllRanges();
        sel.addRange(range);
      });
    });
  });

  apply();
})();
