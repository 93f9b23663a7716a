// Sorting and filtering of the runs table, and the highlighted row of the open run. Reads only
// data- attributes; no run data is ever part of this script.
(function () {
  "use strict";
  var table = document.getElementById("runs");
  if (table) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var field = function (id) { return document.getElementById(id); };
    var filters = { task: field("f-task"), arm: field("f-arm"), outcome: field("f-outcome"), tag: field("f-tag") };
    var apply = function () {
      var task = filters.task.value.trim().toLowerCase();
      var shown = 0;
      rows.forEach(function (row) {
        var d = row.dataset;
        var ok = (!task || d.task.toLowerCase().indexOf(task) >= 0) &&
          (!filters.arm.value || d.arm === filters.arm.value) &&
          (!filters.outcome.value || d.outcome === filters.outcome.value) &&
          (!filters.tag.value || d.tags.indexOf(" " + filters.tag.value + " ") >= 0);
        row.hidden = !ok;
        if (ok) { shown += 1; }
      });
      field("shown").textContent = String(shown);
    };
    Object.keys(filters).forEach(function (k) { filters[k].addEventListener("input", apply); });
    var value = function (row, i) {
      var cell = row.cells[i];
      var v = cell.getAttribute("data-v");
      if (v === null) { return cell.textContent.trim().toLowerCase(); }
      var number = Number(v);
      return isNaN(number) ? v : number;
    };
    table.tHead.addEventListener("click", function (event) {
      var th = event.target.closest("th");
      if (!th) { return; }
      var i = th.cellIndex;
      var ascending = th.getAttribute("aria-sort") !== "ascending";
      Array.prototype.forEach.call(th.parentNode.cells, function (c) { c.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      rows.sort(function (a, b) {
        var x = value(a, i), y = value(b, i);
        var order = x < y ? -1 : x > y ? 1 : 0;
        return ascending ? order : -order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  }
  var mark = function () {
    var id = decodeURIComponent(location.hash.slice(1));
    Array.prototype.forEach.call(document.querySelectorAll("tr[data-run]"), function (row) {
      row.classList.toggle("current", row.getAttribute("data-run") === id);
    });
  };
  window.addEventListener("hashchange", mark);
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && location.hash.indexOf("#run-") === 0) { location.hash = "#runs"; }
  });
  mark();
})();
