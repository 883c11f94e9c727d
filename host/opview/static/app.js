// apconnect operator view: keeps the page live over one Server-Sent Events
// stream. On a "change" event naming a topic this page shows, it fetches
// the page's main content again (rendered and escaped by the server, like
// the page) and swaps it in; nothing else is ever inserted. "ping" events
// keep the status "live"; an error, or no event for three ping intervals,
// says "disconnected" plainly.
(function () {
  "use strict";
  var topics = (document.body.getAttribute("data-topics") || "").split(" ").filter(Boolean);
  var main = document.getElementById("main");
  var conn = document.getElementById("conn");
  if (!topics.length || !main || !conn || !window.EventSource) {
    return;
  }
  var pingMS = 5000, watchdog = 0, source = null, down = false, ended = false, busy = false, again = false;

  function show(state, text) {
    conn.className = "conn " + state;
    conn.textContent = text;
    document.body.setAttribute("data-conn", state);
  }
  function disconnected(why) {
    down = true;
    if (!ended) {
      show("down", "disconnected: " + why);
    }
  }
  function arm() {
    clearTimeout(watchdog);
    watchdog = setTimeout(function () {
      disconnected("no word from the connector for " + Math.round(3 * pingMS / 1000) + " s");
    }, 3 * pingMS);
  }
  function live() {
    show("up", "live");
    arm();
  }
  function refresh() {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    var u = new URL(window.location.href);
    u.searchParams.set("fragment", "1");
    fetch(u.toString(), { credentials: "same-origin", cache: "no-store" })
      .then(function (r) {
        if (r.status === 401) {
          disconnected("this session ended; run `apconnect view` for a new login link");
          ended = true;
          throw new Error("logged out");
        }
        if (!r.ok) {
          throw new Error("HTTP " + r.status);
        }
        return r.text();
      })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        main.replaceChildren.apply(main, Array.prototype.slice.call(doc.body.childNodes));
        document.body.setAttribute("data-refreshed", String(Date.now()));
      })
      .catch(function () {})
      .then(function () {
        busy = false;
        if (again) {
          again = false;
          refresh();
        }
      });
  }
  function connect() {
    source = new EventSource("/events");
    source.addEventListener("hello", function (ev) {
      try {
        pingMS = JSON.parse(ev.data).ping_ms || pingMS;
      } catch (e) {}
      if (down) {
        refresh();
      }
      down = false;
      ended = false;
      live();
    });
    source.addEventListener("ping", live);
    source.addEventListener("change", function (ev) {
      down = false;
      live();
      var d = {};
      try {
        d = JSON.parse(ev.data);
      } catch (e) {}
      if ((d.topics || []).some(function (t) { return topics.indexOf(t) >= 0; })) {
        refresh();
      }
    });
    source.addEventListener("error", function () {
      clearTimeout(watchdog);
      disconnected("the connector is not answering (retrying)");
      if (source.readyState === EventSource.CLOSED) {
        // Refused (a 401 once serve restarted) or gone: the page fetch
        // says which, and the stream is tried again.
        source.close();
        refresh();
        setTimeout(connect, 3000);
      }
    });
  }
  connect();
})();
