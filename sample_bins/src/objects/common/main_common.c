/* objects/common/main_common.o: only references shared_total (extern). */
extern int shared_total;
void c1_add(int n);
void c2_add(int n);

int main(void)
{
    c1_add(1);
    c2_add(2);
    return shared_total;
}
