/* Where a shader finds its dispatch's values (vk_record.c): not in push
 * constants, which a recorded command buffer keeps as they were, but in its
 * slot of the table of dispatches, which the host writes before each
 * submission, bound as a uniform buffer at the slot (a dynamic offset). So
 * a recording replays for other sizes (a pair count that changed in an MD
 * step). A shader declares its values as `struct Push`
 * (n_items, base, then its own; at most VK_PUSH_WORDS words of 4 bytes),
 * then DISPATCH_VALUES(Push), and reads them as pc.n_items and so on. The
 * slot holds the dispatch's work groups after them, for
 * vkCmdDispatchIndirect. Binding 16 is VK_BIND_DISPATCH. */
#define DISPATCH_VALUES(Values) layout(std140, set = 0, binding = 16) uniform DispatchB { Values pc; }
