#include <tenure.h>
#include <tenure_events.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
static int n;
static void l(const tenure_event *ev, void *c) {
    (void)c; uint64_t v; const char *s;
    const tenure_event_desc *d = ev->desc;
    for (size_t f = 0; f < d->field_count; f++) {
        const char *name = d->fields[f].name;
        tenure_event_read_u64(ev, name, &v); tenure_event_read_string(ev, name, &s);
        tenure_event_read_element(ev, name, SIZE_MAX, NULL, &v);
        tenure_event_read_element(ev, name, (SIZE_MAX/8)+1, "x", &v);
        tenure_event_read_element(ev, name, 1u<<30, NULL, &v);
        tenure_event_read_element(ev, name, 0, NULL, NULL);
    }
    tenure_event_read_u64(ev, NULL, &v); tenure_event_read_u64(NULL, "x", &v); tenure_event_read_u64(ev, "Count", NULL);
    /* truncated payload */
    tenure_event e2 = *ev; e2.size = 1; for (size_t f = 0; f < d->field_count; f++) { tenure_event_read_u64(&e2, d->fields[f].name, &v); tenure_event_read_string(&e2, d->fields[f].name, &s); tenure_event_read_element(&e2, d->fields[f].name, 0, NULL, &v);}
    n++;
}
int main(void) {
    tenure_runtime *rt = tenure_create(NULL, NULL);
    tenure_session_start_listener(rt, ~0ull, 5, l, NULL);
    tenure_type_desc d = {.name = "x", .size = 32};
    const tenure_type *t = tenure_type_register(rt, &d);
    tenure_handle *h = tenure_handle_new(rt, TENURE_HANDLE_PINNED, tenure_alloc(rt, t));
    for (int i = 0; i < 300000; i++) tenure_alloc(rt, t);
    tenure_collect(rt, 2, 0); tenure_handle_free(rt, h);
    printf("events %d ok\n", n);
    tenure_destroy(rt);
}
