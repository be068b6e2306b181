/**
 * The drop page's script (inline under the page's nonce, no framework). It
 * opens a submission, then sends each file in chunks through the anonymous
 * drop API; a failed chunk is retried three times and, after a dropped
 * connection, the file resumes from the parts the server already holds.
 * Strings come from the form's data attribute (already in the visitor's
 * language); text is set with textContent only.
 */
export const DROP_SCRIPT = `(()=>{
const f=document.getElementById('drop'),bar=document.getElementById('bar'),msg=document.getElementById('msg');
const T=JSON.parse(f.dataset.strings),tok=encodeURIComponent(f.dataset.token),base='/api/public/drop/'+tok;
const say=(k,v)=>{msg.textContent=T[k].replace(/\\{(\\w+)\\}/g,(m,n)=>v&&v[n]!==undefined?v[n]:m)};
async function call(method,url,body,headers){
  for(let i=0;;i++){
    let r;
    try{r=await fetch(url,{method,body,headers,credentials:'omit',referrerPolicy:'no-referrer'})}catch(e){if(i<3){await new Promise(s=>setTimeout(s,1000*(i+1)));continue}throw e}
    const j=await r.json().catch(()=>({}));
    if(r.ok)return j;
    if(r.status>=500&&r.status!==507&&i<3){await new Promise(s=>setTimeout(s,1000*(i+1)));continue}
    throw new Error(j.message||j.error||String(r.status));
  }
}
const J=(o)=>JSON.stringify(o),H={'content-type':'application/json'},E=f.elements;
f.addEventListener('submit',async(ev)=>{
  ev.preventDefault();
  const files=[...E.files.files];
  if(files.length>Number(f.dataset.max)){say('failed',{reason:'> '+f.dataset.max});return}
  const btn=f.querySelector('button');btn.disabled=true;
  const total=files.reduce((n,x)=>n+x.size,0)||1;let sent=0;
  const show=()=>{const p=Math.floor(sent*100/total);bar.style.width=p+'%';say('sending',{pct:p})};
  try{
    const h=Object.assign({},H);if(E.pin)h['x-service-pin']=E.pin.value;
    const sub=await call('POST',base+'/submissions',J({name:E.name?E.name.value:'',note:E.note.value}),h);
    const sb=base+'/submissions/'+encodeURIComponent(sub.submission_id);
    for(const file of files){
      const up=await call('POST',sb+'/files',J({name:file.name,size:file.size,mime:file.type}),H);
      const fb=sb+'/files/'+encodeURIComponent(up.upload_id),cs=up.chunk_size,n=Math.max(1,Math.ceil(file.size/cs));
      const have=new Map((await call('GET',fb)).parts.map(p=>[p.part,p.etag]));
      for(let i=1;i<=n;i++){
        const blob=file.slice((i-1)*cs,Math.min(file.size,i*cs));
        if(!have.has(i)){const r=await call('PUT',fb+'/parts/'+i,blob,{'content-type':'application/octet-stream'});have.set(i,r.etag)}
        sent+=blob.size;show();
      }
      await call('POST',fb+'/finalize',J({etags:[...have].map(([part,etag])=>({part,etag}))}),H);
    }
    const done=await call('POST',sb+'/finish',undefined,H);
    bar.style.width='100%';say('done',{n:done.received});f.reset();
  }catch(e){say('failed',{reason:e.message})}
  btn.disabled=false;
});
})();`;
