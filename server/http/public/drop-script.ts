/**
 * The drop page's script (inline under the page's nonce, no framework). It
 * opens a submission, then sends each file in chunks through the anonymous
 * drop API. Transient failures (no answer, 408, 429, 5xx other than 507) are
 * retried with backoff (1, 2, 4, 8, 16 s, or `Retry-After`); while the
 * browser is offline it waits for the connection without spending a try.
 * When sending still fails, the submission and each file's upload session are
 * kept: pressing Send again re-reads the parts the server holds and sends only
 * the missing ones, into the same submission folder. Strings come from the
 * form's data attribute (already in the visitor's language); text is set with
 * textContent only.
 */
export const DROP_SCRIPT = `(()=>{
const f=document.getElementById('drop'),bar=document.getElementById('bar'),msg=document.getElementById('msg');
const T=JSON.parse(f.dataset.strings),base=f.dataset.api;
const say=(k,v)=>{msg.textContent=T[k].replace(/\\{(\\w+)\\}/g,(m,n)=>v&&v[n]!==undefined?v[n]:m)};
const sleep=(ms)=>new Promise(s=>setTimeout(s,ms)),TRIES=5;
const online=()=>new Promise(s=>{const t=setTimeout(s,30000);addEventListener('online',()=>{clearTimeout(t);s()},{once:true})});
class Refused extends Error{constructor(m,status){super(m);this.status=status}}
let resume=()=>{};
async function call(method,url,body,headers){
  for(let i=0;;i++){
    let r;
    try{r=await fetch(url,{method,body,headers,credentials:'omit',referrerPolicy:'no-referrer'})}
    catch(e){
      if(!navigator.onLine){say('offline');await online();resume();i--;continue}
      if(i<TRIES){await sleep(1000*2**i);continue}
      throw e;
    }
    const j=await r.json().catch(()=>({}));
    if(r.ok)return j;
    if((r.status===408||r.status===429||(r.status>=500&&r.status!==507))&&i<TRIES){const ra=Number(r.headers.get('retry-after'));await sleep(ra>0?ra*1000:1000*2**i);continue}
    throw new Refused(j.message||j.error||String(r.status),r.status);
  }
}
const J=(o)=>JSON.stringify(o),H={'content-type':'application/json'},E=f.elements;
// Kept across presses of Send until a submission finishes: its URL, and per file its upload session.
let sub=null;const ups=new Map();
const keyOf=(x)=>x.name+'/'+x.size+'/'+x.lastModified;
async function held(up){
  try{return new Map((await call('GET',up.url)).parts.map(p=>[p.part,p.etag]))}
  catch(e){if(e instanceof Refused&&e.status<500)return null;throw e}
}
async function send(file,tick){
  let up=ups.get(keyOf(file));
  if(up&&up.done)return tick(file.size);
  // A session the server dropped (expired) answers 4xx: that file starts over.
  let have=up?await held(up):new Map();
  if(!have){up=null;have=new Map()}
  if(!up){
    const r=await call('POST',sub+'/files',J({name:file.name,size:file.size,mime:file.type}),H);
    up={url:sub+'/files/'+encodeURIComponent(r.upload_id),cs:r.chunk_size,done:false};ups.set(keyOf(file),up);
  }
  const n=Math.max(1,Math.ceil(file.size/up.cs));
  for(let i=1;i<=n;i++){
    const blob=file.slice((i-1)*up.cs,Math.min(file.size,i*up.cs));
    if(!have.has(i)){const r=await call('PUT',up.url+'/parts/'+i,blob,{'content-type':'application/octet-stream'});have.set(i,r.etag)}
    tick(blob.size);
  }
  await call('POST',up.url+'/finalize',J({etags:[...have].map(([part,etag])=>({part,etag}))}),H);
  up.done=true;
}
f.addEventListener('submit',async(ev)=>{
  ev.preventDefault();
  const files=[...E.files.files];
  if(files.length>Number(f.dataset.max)){say('failed',{reason:'> '+f.dataset.max});return}
  const btn=f.querySelector('button');btn.disabled=true;
  const total=files.reduce((n,x)=>n+x.size,0)||1;let sent=0;
  const show=()=>{const p=Math.floor(sent*100/total);bar.style.width=p+'%';say('sending',{pct:p})};
  resume=show;
  try{
    if(!sub){
      const h=Object.assign({},H);if(E.pin)h['x-service-pin']=E.pin.value;
      const s=await call('POST',base+'/submissions',J({name:E.name?E.name.value:'',note:E.note.value}),h);
      sub=base+'/submissions/'+encodeURIComponent(s.submission_id);
    }
    for(const file of files)await send(file,(b)=>{sent+=b;show()});
    const done=await call('POST',sub+'/finish',undefined,H);
    sub=null;ups.clear();
    bar.style.width='100%';say('done',{n:done.received});f.reset();
  }catch(e){
    // A submission the server no longer knows cannot be resumed: the next Send starts a new one.
    if(e instanceof Refused&&(e.status===404||e.status===410)){sub=null;ups.clear()}
    say('failed',{reason:e.message});
  }
  btn.disabled=false;
});
})();`;
