package burstbench.bridge.contract;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Strings seen (producer ids, nonces), each with its index in the order they first came. The
 * last one found is kept at hand: a run's messages come from few producers, mostly in runs of
 * one, so most messages cost one {@code equals} instead of a hash and a map lookup.
 */
final class Names {
  final List<String> names = new ArrayList<>();
  private final Map<String, Integer> index = new HashMap<>();
  private String last;
  private int lastIndex;

  int of(String s) {
    if (s.equals(last)) {
      return lastIndex;
    }
    Integer i = index.get(s);
    if (i == null) {
      i = names.size();
      names.add(s);
      index.put(s, i);
    }
    last = s;
    lastIndex = i;
    return i;
  }
}
