#include <tenure.h>
#include <stddef.h>
typedef struct node { tenure_header h; struct node *next; long v; } node;
int main(void) {
    tenure_runtime *rt = tenure_create(NULL, NULL);
    size_t refs[] = {offsetof(node, next)};
    tenure_type_desc d = {.name = "node", .size = sizeof(node), .ref_offsets = refs, .ref_count = 1};
    const tenure_type *nt = tenure_type_register(rt, &d);
    for (int i = 0; i < 200000; i++) tenure_alloc(rt, nt);
    for (int i = 0; i < 5; i++) tenure_collect(rt, 2, 0);
    tenure_destroy(rt);
}
