"""The report's inline stylesheet and script (no fonts, libraries or network: the file opens offline)."""

from __future__ import annotations

#: Content-Security-Policy of the page: nothing is fetched but images beside the file.
CSP = ("default-src 'none'; img-src data: file: 'self'; style-src 'unsafe-inline'; "
       "script-src 'unsafe-inline'")

STYLE = """
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;background:#f4f5f7;color:#1f2328}
main{max-width:1180px;margin:0 auto;padding:0 20px 40px}
h1{font-size:16px;margin:0 0 4px;line-height:1.35}h2{font-size:15px;margin:12px 0 6px}
.muted{color:#6b7280;font-weight:normal}
#summary{background:#fff;border:1px solid #d8dbe0;border-radius:10px;padding:10px 16px;margin:12px 0 8px}
#summary p{margin:4px 0}
#summary .sid{font-size:12px;color:#6b7280;margin-bottom:6px}
.facts{display:grid;grid-template-columns:repeat(auto-fill,minmax(260px,1fr));gap:2px 20px;margin:6px 0 0;font-size:13px}
.facts div{min-width:0}.facts dt{display:inline;color:#6b7280}.facts dt::after{content:": "}
.facts dd{display:inline;margin:0;word-break:break-word}
.badge{display:inline-block;padding:1px 9px;border-radius:10px;color:#fff;font-size:12px;font-weight:600;
 vertical-align:2px}
.badge.succeeded{background:#15803d}.badge.failed{background:#b91c1c}.badge.aborted,.badge.interrupted{background:#b45309}
.badge.running{background:#2563eb}
ul.checks{margin:6px 0 0;padding-left:18px}ul.checks li{word-break:break-word}ul.checks .got{color:#b91c1c}
table.tokens{border-collapse:collapse;margin-top:8px;font-size:13px}
table.tokens th,table.tokens td{padding:1px 10px 1px 0;text-align:right}table.tokens th:first-child,
table.tokens td:first-child{text-align:left}table.tokens tr.sub td:first-child{padding-left:14px}
table.tokens tfoot td{border-top:1px solid #ccc;font-weight:600}
#charts svg{display:block;width:100%;height:auto;background:#fff;border:1px solid #d8dbe0;border-radius:8px;
 margin-bottom:6px}
svg .axis{font-size:11px;fill:#6b7280}svg .grid{stroke:#e5e7eb}svg .ctx{fill:none;stroke:#2563eb;stroke-width:1.5}
svg .share{fill:none;stroke:#15803d;stroke-width:1.5}svg .budget{stroke:#b91c1c;stroke-dasharray:6 4}
svg .soft{stroke:#b45309;stroke-dasharray:3 3}svg .hard{stroke:#dc2626;stroke-dasharray:2 2}
.step{display:flex;gap:14px;background:#fff;border:1px solid #d8dbe0;border-radius:8px;padding:10px;margin:8px 0}
.step.current{outline:3px solid #3b82f6}
.shotbox{position:relative;flex:0 0 160px;width:160px;align-self:flex-start;display:block;cursor:zoom-in;
 border:1px solid #ccc;border-radius:6px;overflow:hidden;background:#eee}
.shotbox img{display:block;width:100%;height:auto}
.shotbox svg.mark,#zoom svg.mark{position:absolute;left:0;top:0;width:100%;height:100%;pointer-events:none}
.noshot{flex:0 0 160px;height:90px;display:flex;align-items:center;justify-content:center;color:#888;
 border:1px dashed #ccc;border-radius:6px}
.body{flex:1;min-width:0}.body h3{margin:0 0 4px;font-size:15px}
.body p{margin:2px 0;white-space:pre-wrap;word-break:break-word}
.label{display:inline-block;min-width:64px;color:#6b7280;font-size:12px;text-transform:uppercase}
.thought{color:#374151}.action code{background:#f3f4f6;padding:0 4px;border-radius:4px}
.result.error{color:#b91c1c}.result.ok{color:#15803d}.result.nochange{color:#b45309}.observed{color:#374151}
.lvl{font-size:11px;padding:0 7px;border-radius:9px;border:1px solid #c4b5fd;color:#5b21b6;background:#f5f3ff}
.lvl.verbatim{border-color:#bbf7d0;color:#166534;background:#f0fdf4}
.replay{padding:1px 8px;border-radius:10px;color:#fff;font-size:12px}.replay.replayed{background:#15803d}
.replay.retargeted{background:#b45309}.replay.diverged{background:#b91c1c}.replay.healed{background:#0e7490}
.band{background:#faf5ff;border:1px solid #ddd6fe;border-left:5px solid #7c3aed;border-radius:8px;
 padding:4px 12px;margin:10px 0 6px}
.band.era{background:#eff6ff;border-color:#bfdbfe;border-left-color:#2563eb}
.band.stop{background:#fffbeb;border-color:#fde68a;border-left-color:#d97706}
.band.call{background:#f5f3ff;border-color:#ddd6fe;border-left-color:#7c3aed}.band .ok{color:#15803d}.band .bad{color:#b91c1c}
.band.period,.band.snapshot{background:#f0fdfa;border-color:#99f6e4;border-left-color:#0d9488}
.band h3{font-size:13.5px;margin:1px 0 3px}.band p{margin:0;white-space:pre-wrap;word-break:break-word;font-size:12.5px}
.band .fields{display:grid;grid-template-columns:repeat(auto-fill,minmax(420px,1fr));gap:0 18px}
.band .k{color:#6b7280}.band details{font-size:13px;margin-top:3px}.band summary{cursor:pointer;color:#5b21b6}
#zoom{position:fixed;inset:0;background:rgba(0,0,0,.82);display:none;align-items:center;justify-content:center;
 z-index:10;cursor:zoom-out}
#zoom.open{display:flex}#zoom .frame{position:relative;max-height:94vh;max-width:94vw}
#zoom img{display:block;max-height:94vh;max-width:94vw}#zoom .note{position:fixed;bottom:8px;left:0;right:0;
 text-align:center;color:#ddd;font-size:12px}
nav.help{position:fixed;right:12px;bottom:12px;background:#1d2733;color:#fff;padding:5px 10px;border-radius:6px;
 font-size:12px;opacity:.85}
"""

SCRIPT = """
(function(){
  document.querySelectorAll('img[data-same]').forEach(function(img){
    var first=document.getElementById('i-'+img.getAttribute('data-same'));
    if(first) img.src=first.getAttribute('src');
  });
  var FULL=window.ARTEMIS_FULL||{};
  var zoom=document.getElementById('zoom'), frame=zoom.querySelector('.frame'), note=zoom.querySelector('.note');
  document.querySelectorAll('a.shotbox').forEach(function(a){
    a.addEventListener('click',function(ev){
      ev.preventDefault();
      var key=a.getAttribute('data-key'), img=a.querySelector('img');
      var href=a.getAttribute('href'), src=FULL[key]||(href&&href!=='#'?href:img.src);
      frame.innerHTML='';
      var big=document.createElement('img'); big.src=src; big.alt=img.alt; frame.appendChild(big);
      var mark=a.querySelector('svg.mark'); if(mark) frame.appendChild(mark.cloneNode(true));
      note.textContent=(FULL[key]||(href&&href!=='#'))?'':'thumbnail only: write the report with --assets DIR for full-size screenshots';
      zoom.classList.add('open');
    });
  });
  zoom.addEventListener('click',function(){zoom.classList.remove('open');});
  var cards=[].slice.call(document.querySelectorAll('article.step')), i=-1;
  function go(n){ if(!cards.length) return; i=Math.max(0,Math.min(cards.length-1,n));
    cards.forEach(function(c){c.classList.remove('current');});
    cards[i].classList.add('current'); cards[i].scrollIntoView({block:'start'});
    if(history.replaceState) history.replaceState(null,'','#'+cards[i].id); }
  function byStep(n){ for(var k=0;k<cards.length;k++){ if(+cards[k].getAttribute('data-step')>=n) return k; } return cards.length-1; }
  document.addEventListener('keydown',function(ev){
    if(ev.altKey||ev.ctrlKey||ev.metaKey) return;
    if(ev.key==='Escape'){zoom.classList.remove('open');return;}
    if(ev.key==='j'||ev.key==='ArrowDown'||ev.key==='ArrowRight'){go(i+1);ev.preventDefault();}
    else if(ev.key==='k'||ev.key==='ArrowUp'||ev.key==='ArrowLeft'){go(i-1);ev.preventDefault();}
    else if(ev.key==='Home'){go(0);ev.preventDefault();}
    else if(ev.key==='End'){go(cards.length-1);ev.preventDefault();}
  });
  document.querySelectorAll('svg.chart').forEach(function(svg){
    svg.addEventListener('click',function(ev){
      var r=svg.getBoundingClientRect(), vb=svg.viewBox.baseVal;
      var x=(ev.clientX-r.left)*vb.width/r.width, l=+svg.getAttribute('data-left'), w=+svg.getAttribute('data-plot');
      var first=+svg.getAttribute('data-first'), last=+svg.getAttribute('data-last');
      if(x<l||x>l+w) return;
      go(byStep(Math.round(first+(x-l)/w*(last-first))));
    });
  });
})();
"""
