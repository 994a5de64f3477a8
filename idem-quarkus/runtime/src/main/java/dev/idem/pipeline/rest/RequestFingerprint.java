package dev.idem.pipeline.rest;

/**
 * The fingerprint of an {@link Idempotent} request: the same key with another fingerprint is a
 * reused key (422). By default ({@link MethodPathBody}) the method, the path with its query and
 * the body, JSON compared by content (members in any order, any spacing). A service changes it by
 * declaring a bean of this type.
 */
@FunctionalInterface
public interface RequestFingerprint {

    /**
     * @param scope the endpoint's scope
     * @param method the HTTP method
     * @param target the path and query of the request, as sent
     * @param body the request's body as the method received it ({@code byte[]}, {@code String} or
     *             the type it was read into), or null
     */
    String of(String scope, String method, String target, Object body);
}
