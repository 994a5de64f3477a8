package dev.idem.ops;

import io.smallrye.config.ConfigMapping;
import java.util.Optional;

@ConfigMapping(prefix = "idem.admin")
public interface AdminConfig {
    /** The token admin requests must carry; none outside dev and test: admin stays closed. */
    Optional<String> token();
}
