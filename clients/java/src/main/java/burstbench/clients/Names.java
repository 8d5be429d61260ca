package burstbench.clients;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * Strings seen (producer ids, nonces), each with its index in the order they first came: what a
 * consumer's records keep instead of the strings (the JMS consumer's and the bridge's). The last
 * one found is kept at hand: a run's messages come from few producers, mostly in runs of one,
 * so most messages cost one {@code equals} instead of a hash and a map lookup.
 */
public final class Names {
    private static final Predicate<String> ANY = s -> true;

    /** The strings, by index. */
    public final List<String> names = new ArrayList<>();
    private final Map<String, Integer> index = new HashMap<>();
    private String last;
    private int lastIndex;

    /** The index of {@code s} (a new one is added). */
    public int of(String s) { return of(s, ANY); }

    /** The index of {@code s}, or -1 when it is new and {@code allowNew} does not hold for it. */
    public int of(String s, Predicate<String> allowNew) {
        if (s.equals(last)) return lastIndex;
        Integer i = index.get(s);
        if (i == null) {
            if (!allowNew.test(s)) return -1;
            i = names.size();
            names.add(s);
            index.put(s, i);
        }
        last = s;
        lastIndex = i;
        return i;
    }
}
