package dev.idem.payments.wechatpay;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.Base64;
import java.util.Optional;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * Opens a notification's {@code resource}: AEAD_AES_256_GCM under the APIv3 key, with
 * {@code resource.nonce} and {@code resource.associated_data}; the ciphertext is base64 of the
 * encrypted bytes followed by the 16-byte tag, which authenticates both.
 */
final class WeChatPayResourceCipher {

    static final String ALGORITHM = "AEAD_AES_256_GCM";
    static final int TAG_BITS = 128;

    private WeChatPayResourceCipher() {}

    /** The plaintext, or empty when it does not decode, decrypt or authenticate. */
    static Optional<byte[]> open(SecretKeySpec key, WeChatPayNotification.Resource resource) {
        if (resource.nonce() == null || resource.nonce().isEmpty() || resource.ciphertext() == null) {
            return Optional.empty();
        }
        try {
            byte[] sealed = Base64.getDecoder().decode(resource.ciphertext());
            if (sealed.length < TAG_BITS / 8) {
                // shorter than its tag: the JDK would fail with a provider error, not a bad tag
                return Optional.empty();
            }
            Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
            cipher.init(Cipher.DECRYPT_MODE, key,
                    new GCMParameterSpec(TAG_BITS, resource.nonce().getBytes(StandardCharsets.UTF_8)));
            if (resource.associatedData() != null) {
                cipher.updateAAD(resource.associatedData().getBytes(StandardCharsets.UTF_8));
            }
            return Optional.of(cipher.doFinal(sealed));
        } catch (GeneralSecurityException | IllegalArgumentException undecryptable) {
            return Optional.empty();
        }
    }
}
