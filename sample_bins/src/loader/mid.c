/* linkaudit loader fixture: libmid.so, NEEDs libleaf.so and calls it. */
extern int leaf_value(int x);

int mid_value(int x) { return leaf_value(x) + 7; }
