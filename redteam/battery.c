#define _GNU_SOURCE
#include <tenure.h>
#include <tenure_events.h>
#include <tenure_profiler.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <unistd.h>
#include <signal.h>
#include <sys/wait.h>
#include <pthread.h>

typedef struct node { tenure_header h; struct node *next; long v; } node;
static tenure_runtime *rt, *rt2;
static const tenure_type *nt, *nt2, *arr_t, *bytes_t;
static void hook(tenure_runtime *r, tenure_result res, const char *fn, const char *msg, void *c) {
    (void)r;(void)c; fprintf(stderr, "  hook: %s %s: %s\n", tenure_strerror(res), fn, msg);
}
static void setup(void) {
    rt = tenure_create(NULL, NULL);
    rt2 = tenure_create(NULL, NULL);
    tenure_set_error_hook(rt, hook, NULL);
    tenure_set_error_hook(rt2, hook, NULL);
    size_t refs[] = {offsetof(node, next)};
    tenure_type_desc d = {.name = "node", .size = sizeof(node), .ref_offsets = refs, .ref_count = 1};
    nt = tenure_type_register(rt, &d);
    nt2 = tenure_type_register(rt2, &d);
    tenure_type_desc a = {.name = "refs", .elem_size = sizeof(void*), .flags = TENURE_TYPE_ARRAY|TENURE_TYPE_REF_ARRAY};
    arr_t = tenure_type_register(rt, &a);
    tenure_type_desc b = {.name = "bytes", .elem_size = 1, .flags = TENURE_TYPE_ARRAY|TENURE_TYPE_NO_REFS};
    bytes_t = tenure_type_register(rt, &b);
}
#define CASE(name) static void name(void)
CASE(handle_foreign) { node *o = tenure_alloc(rt2, nt2); tenure_handle *h = tenure_handle_new(rt2, TENURE_HANDLE_STRONG, o);
  printf("get foreign=%p\n", tenure_handle_get(rt, h)); tenure_handle_free(rt, h); tenure_handle_set(rt, h, NULL); }
CASE(handle_garbage) { char buf[64]; memset(buf, 0x41, 64); tenure_handle_get(rt, (tenure_handle*)buf); tenure_handle_free(rt,(tenure_handle*)buf);
  tenure_handle_get(rt, (tenure_handle*)(uintptr_t)0xdeadbeef0ull); tenure_handle_get_secondary(rt, (tenure_handle*)buf); tenure_handle_sized_ref_bytes(rt,(tenure_handle*)buf);}
CASE(handle_null_rt) { tenure_handle_get(NULL, NULL); tenure_handle_free(NULL, NULL); tenure_handle_new(NULL, 2, NULL); tenure_handle_sized_ref_bytes(NULL, NULL); tenure_handle_count(NULL); }
CASE(handle_sizedref_wrongkind) { tenure_handle *h = tenure_handle_new(rt, TENURE_HANDLE_WEAK_SHORT, NULL); printf("%llu\n",(unsigned long long)tenure_handle_sized_ref_bytes(rt,h)); tenure_handle_free(rt,h); tenure_handle_sized_ref_bytes(rt,h); tenure_handle_set_variable_kind(rt,h,2); tenure_handle_set_secondary(rt,h,NULL);}
CASE(alloc_foreign_type) { printf("%p\n", tenure_alloc(rt, nt2)); printf("%p\n", tenure_alloc_array(rt, nt2, 3)); printf("%p\n", tenure_alloc(rt, (const tenure_type*)&rt)); printf("%p\n", tenure_alloc(rt, NULL));}
CASE(alloc_huge) { printf("%p\n", tenure_alloc_array(rt, arr_t, SIZE_MAX)); printf("%p\n", tenure_alloc_array(rt, arr_t, SIZE_MAX/8)); printf("%p\n", tenure_alloc_array(rt, bytes_t, SIZE_MAX-15)); printf("%p\n", tenure_alloc_array(rt, bytes_t, (size_t)1<<40)); printf("%p\n", tenure_alloc_array_pinned(rt, bytes_t, SIZE_MAX-7)); printf("%p\n", tenure_alloc_array(rt, bytes_t, (size_t)15<<30));}
CASE(nonobject_queries) { char stack[64]; void *m = malloc(64); node *o = tenure_alloc(rt, nt);
  void *ps[] = {NULL, stack, m, (char*)o+8, (char*)o+1, (void*)1, (void*)0xffffffffffff0000ull, (char*)((tenure__head*)rt)->heap_base, (char*)((tenure__head*)rt)->heap_base + ((tenure__head*)rt)->heap_size - 16};
  for (size_t i=0;i<sizeof ps/sizeof *ps;i++){ tenure_object_type(rt, ps[i]); tenure_object_size(rt, ps[i]); tenure_object_generation(rt, ps[i]); tenure_is_object(rt, ps[i]); tenure_identity_hash(rt, ps[i]); tenure_suppress_finalize(rt, ps[i]); tenure_reregister_for_finalize(rt,ps[i]); tenure_handle_new(rt, 2, ps[i]);} }
CASE(nonobject_nullrt) { tenure_object_type(NULL, NULL); tenure_object_size(NULL,NULL); tenure_is_object(NULL,NULL); tenure_identity_hash(NULL,NULL); tenure_collect(NULL,0,0); tenure_get_stats(NULL,NULL); tenure_heap_walk(NULL,NULL,NULL); tenure_verify_heap(NULL); tenure_root_area_add(NULL,NULL,0); tenure_root_area_remove(NULL,NULL); tenure_root_scanner_remove(NULL,NULL); tenure_session_stop(NULL,NULL); tenure_profiler_detach(NULL,NULL); tenure_run_pending_finalizers(NULL); tenure_pending_finalizers(NULL); tenure_wait_for_pending_finalizers(NULL); tenure_add_memory_pressure(NULL,1); tenure_memory_pressure(NULL); tenure_register_frozen_segment(NULL,NULL,0); tenure_frozen_object_init(NULL,NULL,NULL,0); tenure_type_register(NULL,NULL); tenure_thread_count(NULL); tenure_last_error(NULL); tenure_clear_error(NULL); tenure_set_error_hook(NULL,NULL,NULL); tenure_instance_id(NULL); tenure_generation_bounds(NULL,NULL,0); tenure_session_flush(NULL,NULL); tenure_destroy(NULL); tenure_get_last_gc_info(NULL,NULL); tenure_set_gc_callback(NULL,NULL,NULL); tenure_set_refcount_callback(NULL,NULL,NULL); tenure_blocking_enter(NULL); tenure_blocking_leave(NULL); tenure_thread_attach(NULL); tenure_thread_detach(NULL); }
CASE(nullout) { tenure_get_stats(rt, NULL); tenure_get_last_gc_info(rt, NULL); tenure_generation_bounds(rt, NULL, 5); tenure_heap_walk(rt, NULL, NULL); }
CASE(roots_garbage) { char buf[64]; memset(buf,0,64); tenure_root_area_remove(rt,(tenure_root_area*)buf); tenure_root_scanner_remove(rt,(tenure_root_scanner*)buf); tenure_session_stop(rt,(tenure_session*)buf); tenure_profiler_detach(rt,(tenure_profiler*)buf); tenure_session_flush(rt,(tenure_session*)buf);
  void *slots[2]={0}; tenure_root_area *a = tenure_root_area_add(rt2, slots, 2); tenure_root_area_remove(rt, a); tenure_root_area_add(rt, NULL, 5); tenure_root_area_add(rt, slots, SIZE_MAX); tenure_collect(rt,2,0);}
CASE(root_area_bad_slots) { void *slots[2]={(void*)0x1234,(void*)8}; tenure_root_area_add(rt, slots, 2); printf("collect %d\n", tenure_collect(rt,2,0)); }
CASE(write_ref_nonobj) { node *o = tenure_alloc(rt, nt); node stackn = {0}; tenure_write_ref(rt, &stackn, &stackn.next, o); tenure_write_ref(rt, o, &o->next, &stackn); tenure_collect(rt, 2,0); }
CASE(frozen_bad) { char *seg = aligned_alloc(4096, 1<<16); memset(seg,0,1<<16); size_t n = tenure_frozen_object_init(rt, seg, nt, 0); printf("n=%zu\n",n); tenure_register_frozen_segment(rt, seg, n); tenure_register_frozen_segment(rt, seg, n); tenure_register_frozen_segment(rt, seg+3, 100); tenure_register_frozen_segment(rt, (void*)((tenure__head*)rt)->heap_base, 4096); tenure_frozen_object_init(rt, seg+1000, arr_t, SIZE_MAX); tenure_register_frozen_segment(rt, seg, SIZE_MAX); tenure_collect(rt,2,0); }
CASE(double_destroy) { tenure_destroy(rt2); tenure_destroy(rt2); }
CASE(use_after_destroy) { tenure_destroy(rt2); tenure_collect(rt2, 0, 0); }
static int deep_visit(void *o, const tenure_type *t, size_t s, int g, void *c) { (void)o;(void)t;(void)s;(void)g; int *n=c; if ((*n)++ < 3) tenure_heap_walk(rt, deep_visit, c); return 0; }
CASE(walk_nested) { int n = 0; tenure_alloc(rt, nt); tenure_heap_walk(rt, deep_visit, &n); }
CASE(deep_list) { node *head=NULL,*n=NULL; TENURE_FRAME(rt, f, head, n); for (long i=0;i<3000000;i++){ n=tenure_alloc(rt,nt); tenure_write_ref(rt,n,&n->next,head); head=n;} tenure_collect(rt,2,0); tenure_collect(rt,2,TENURE_COLLECT_COMPACT); TENURE_FRAME_POP(rt,f); }
static void deep_trace(void *obj, tenure_visitor *v){ node *n=obj; tenure_visit(v,(void**)&n->next);}
CASE(deep_list_trace) { tenure_type_desc d = {.name="tnode", .size=sizeof(node), .trace=deep_trace}; const tenure_type *t = tenure_type_register(rt,&d); node *head=NULL,*n=NULL; TENURE_FRAME(rt, f, head, n); for (long i=0;i<3000000;i++){ n=tenure_alloc(rt,t); tenure_write_ref(rt,n,&n->next,head); head=n;} tenure_collect(rt,2,0); TENURE_FRAME_POP(rt,f); }
static tenure_visitor *saved_v;
static void save_scan(tenure_runtime *r, tenure_visitor *v, void *c){(void)r;(void)c; saved_v=v;}
CASE(visit_outside) { tenure_root_scanner_add(rt, save_scan, NULL); tenure_collect(rt,0,0); void *x = NULL; tenure_visit(saved_v, &x); node *o = tenure_alloc(rt, nt); x = o; tenure_visit(saved_v, &x); tenure_visit(NULL, &x); }
CASE(frame_garbage) { tenure_frame f = {(tenure_frame*)0x1234, 5, (void***)0x10}; tenure_frame_push(rt, &f); printf("collect %d\n", tenure_collect(rt,0,0)); }
CASE(type_desc_bad) { tenure_type_desc d = {.name=NULL, .size=sizeof(node)}; tenure_type_register(rt,&d);
  size_t refs[]={SIZE_MAX-3}; tenure_type_desc e = {.name="x", .size=SIZE_MAX, .ref_offsets=refs,.ref_count=1}; tenure_type_register(rt,&e);
  tenure_type_desc f2 = {.name="y", .size=sizeof(node), .ref_offsets=NULL, .ref_count=5}; tenure_type_register(rt,&f2);
  tenure_type_desc g = {.name="z", .size=sizeof(node), .ref_offsets=refs, .ref_count=SIZE_MAX}; tenure_type_register(rt,&g);
  tenure_type_desc h2 = {.name="w", .elem_size=SIZE_MAX/2, .flags=TENURE_TYPE_ARRAY}; const tenure_type *t = tenure_type_register(rt,&h2); if (t) printf("%p\n", tenure_alloc_array(rt,t,3));
  tenure_type_desc i2 = {.name="v", .size=16, .elem_size=8, .flags=TENURE_TYPE_ARRAY}; tenure_type_register(rt,&i2);
  printf("name %s\n", tenure_type_name(NULL)); tenure_type_name((const tenure_type*)&d); }
CASE(session_misuse) { tenure_session *s = tenure_session_start_listener(rt, 1, 5, NULL, NULL); s = tenure_session_start_ctf(rt, 1, 5, ""); s = tenure_session_start_ctf(rt, 1, 5, "/"); s = tenure_session_start_ctf(rt,1,5,"/proc/self"); s=tenure_session_start_ctf(rt,1,5,"/dev/null/x"); (void)s;
  char big[8000]; memset(big,'a',sizeof big); big[7999]=0; tenure_session_start_ctf(rt,1,5,big);
  char deep[6000]; size_t o=0; while (o<5990){deep[o++]='a';deep[o++]='/';} deep[o]=0; chdir("/tmp"); tenure_session_start_ctf(rt,1,5,deep);}
CASE(profiler_misuse) { tenure_profiler_attach(rt, NULL, 0, NULL); tenure_profiler_callbacks cb; memset(&cb,0,sizeof cb); tenure_profiler *p = tenure_profiler_attach(rt,&cb,0xffffffff,NULL); tenure_profiler_detach(rt,p); tenure_profiler_detach(rt,p); tenure_profiler_detach(rt2,p);}
CASE(pressure) { tenure_add_memory_pressure(rt, UINT64_MAX); tenure_add_memory_pressure(rt, UINT64_MAX); tenure_remove_memory_pressure(rt, 5); tenure_alloc(rt, nt); }
CASE(collect_bad) { tenure_collect(rt, 99, 0); tenure_collect(rt, -5, 0xffffffff); tenure_collect(rt, 2, 0xffffffff); }
CASE(variable_kind) { tenure_handle *h = tenure_handle_new(rt, TENURE_HANDLE_VARIABLE, NULL); tenure_handle_set_variable_kind(rt, h, 99); tenure_handle_set_variable_kind(rt, h, TENURE_HANDLE_DEPENDENT); tenure_handle_new(rt, 99, NULL); tenure_handle_new(rt, -1, NULL); }
CASE(gen_bounds) { tenure_generation_range r[2]; printf("%zu\n", tenure_generation_bounds(rt, r, SIZE_MAX)); }
CASE(unattached_thread_destroy) { /* destroy from a thread not attached */ }

struct c { const char *n; void (*f)(void); } cases[] = {
#define C(x) {#x, x},
C(handle_foreign) C(handle_garbage) C(handle_null_rt) C(handle_sizedref_wrongkind) C(alloc_foreign_type) C(alloc_huge) C(nonobject_queries) C(nonobject_nullrt) C(nullout) C(roots_garbage) C(root_area_bad_slots) C(write_ref_nonobj) C(frozen_bad) C(double_destroy) C(use_after_destroy) C(walk_nested) C(deep_list) C(deep_list_trace) C(visit_outside) C(frame_garbage) C(type_desc_bad) C(session_misuse) C(profiler_misuse) C(pressure) C(collect_bad) C(variable_kind) C(gen_bounds)
};
int main(int argc, char **argv) {
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    if (argc > 1 && strcmp(argv[1], cases[i].n)) continue;
    fflush(stdout);
    pid_t p = fork();
    if (!p) { alarm(120); setup(); cases[i].f(); tenure_destroy(rt); _exit(0); }
    int st; waitpid(p, &st, 0);
    if (WIFSIGNALED(st)) printf("CASE %s: SIGNAL %d\n", cases[i].n, WTERMSIG(st));
    else printf("CASE %s: exit %d\n", cases[i].n, WEXITSTATUS(st));
  }
}
