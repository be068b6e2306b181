/**
 * Strings of the public pages (share, PIN, drop, dead link) and of the link
 * e-mails, in English and Turkish. Kept apart from the API catalogue: these
 * are what strangers read, and the pages ship only the keys they use.
 */
import { format, languagePacks, type Lang } from '../lib/i18n';

export const publicEn = {
  'page.title.file': 'Shared file',
  'page.encrypted': 'Encrypted file',
  'page.encrypted.about': 'This file is encrypted. It is decrypted in your browser with the key in the link.',
  'page.encrypted.noscript': 'Decrypting this file needs JavaScript. Without it you can only download the encrypted bytes.',
  'page.title.folder': 'Shared folder',
  'page.download': 'Download',
  'page.download_all': 'Download all (ZIP)',
  'page.preparing': 'Preparing the ZIP archive…',
  'page.items': '{n} items',
  'page.items.one': '{n} item',
  'page.back': 'Back to the folder',
  'page.prev': 'Previous',
  'page.next': 'Next',
  'page.preview_cut': 'The file is long: only its first megabyte is shown. Download it to read it all.',
  'file.size': 'Size',
  'file.type': 'Type',
  'page.expires': 'Available until {date}',
  'page.downloads_left': '{n} downloads left',
  'page.downloads_left.one': '{n} download left',
  'page.empty': 'This folder is empty.',
  'page.up': 'Up',
  'vlink.decrypting': 'Decrypting in your browser… {pct}%',
  'vlink.in_browser': 'Decrypted in your browser: the server never saw this file’s name or content.',
  'vlink.save': 'Save',
  'vlink.untitled': 'Encrypted file',
  'vlink.missing': 'This link has no key: the part after # is missing. Ask the sender for the whole link.',
  'vlink.incomplete': "This link's key is incomplete. Ask the sender for the whole link.",
  'vlink.integrity': 'This file could not be verified: the key does not fit it, or its bytes were changed. Nothing of it is shown.',
  'vlink.failed': 'The file could not be fetched: {reason}',
  'vlink.insecure': 'This page can only decrypt over a secure connection (https). Ask the sender for an https link.',
  'pin.title': 'This link is protected',
  'pin.prompt': 'Enter the PIN you were given.',
  'pin.label': 'PIN',
  'pin.submit': 'Open',
  'pin.wrong': 'Wrong PIN. {tries_left} tries left.',
  'pin.locked': 'Too many wrong answers. Try again in {minutes} minutes.',
  'dead.title': 'Link not available',
  'dead.expired': 'This link has expired.',
  'dead.title.expired': 'Link expired',
  'dead.title.revoked': 'Link revoked',
  'dead.title.used_up': 'Link used up',
  'dead.title.used_up_drop': 'File request full',
  'dead.revoked': 'This link has been revoked and is no longer available.',
  'dead.used_up': 'This link has been used up: all the downloads it allowed have been made.',
  'dead.used_up_drop': 'This file request is full: it accepts no more files.',
  'dead.not_found': 'There is nothing at this address. The link may be mistyped or removed.',
  'dead.unavailable': 'The storage behind this link cannot be reached right now. The link still works; try again later.',
  'dead.busy': 'The service is busy right now. The link still works; try again in a moment.',
  'dead.suspended': 'This link is temporarily suspended because of unusual traffic. Its owner has been told and can re-enable it.',
  'dead.error': 'Something went wrong. Try again later.',
  'app.page_unavailable': "This page cannot be shown right now: the service's web pages are not installed. The link still works; try again later.",
  'drop.title': 'Send files',
  'drop.intro': 'Files you send here go privately to the person who shared this page. You cannot see what others sent.',
  'drop.name': 'Your name (optional)',
  'drop.note': 'Note (optional)',
  'drop.files': 'Files',
  'drop.limits': 'Up to {files} files, {size} MB each.',
  'drop.allowed': 'Allowed types: {ext}',
  'drop.send': 'Send',
  'drop.sending': 'Sending… {pct}%',
  'drop.done': 'Thank you, {n} file(s) received.',
  'drop.failed': 'Sending failed: {reason}',
  'drop.offline': 'Connection lost. Sending resumes when it is back…',
  'drop.noscript': 'Without JavaScript each file can be at most {size} MB, and a broken transfer starts over.',
  'drop.received': 'Received:',
  'drop.again': 'Send more files',
  'drop.back': 'Back to the form',
  'mail.share.subject': '{sender} shared "{name}" with you',
  'mail.share.body': '{sender} shared "{name}" with you.\n\nOpen: {url}\n{expiry}{message}',
  'mail.drop.subject': '{sender} asks you to send files',
  'mail.drop.body': '{sender} asks you to send files to "{name}".\n\nUpload here: {url}\n{expiry}{message}',
  'mail.expiry': 'The link works until {date}.\n',
  'mail.received.subject': 'Files received in "{folder}"',
  'mail.received.body': '{uploader} sent {n} file(s) to your file request "{name}":\n\n{files}\n\nFolder: {folder}',
  anon: 'Someone',
};

type Key = keyof typeof publicEn;

const tr: Record<Key, string> = {
  'page.title.file': 'Paylaşılan dosya',
  'page.encrypted': 'Şifreli dosya',
  'page.encrypted.about': 'Bu dosya şifreli. Bağlantıdaki anahtarla tarayıcınızda çözülür.',
  'page.encrypted.noscript': 'Bu dosyayı çözmek için JavaScript gerekir. O olmadan yalnızca şifreli baytları indirebilirsiniz.',
  'page.title.folder': 'Paylaşılan klasör',
  'page.download': 'İndir',
  'page.download_all': 'Tümünü indir (ZIP)',
  'page.preparing': 'ZIP arşivi hazırlanıyor…',
  'page.items': '{n} öğe',
  'page.items.one': '{n} öğe',
  'page.back': 'Klasöre dön',
  'page.prev': 'Önceki',
  'page.next': 'Sonraki',
  'page.preview_cut': 'Dosya uzun: yalnızca ilk megabaytı gösteriliyor. Tamamını okumak için indirin.',
  'file.size': 'Boyut',
  'file.type': 'Tür',
  'page.expires': '{date} tarihine kadar erişilebilir',
  'page.downloads_left': '{n} indirme hakkı kaldı',
  'page.downloads_left.one': '{n} indirme hakkı kaldı',
  'page.empty': 'Bu klasör boş.',
  'page.up': 'Yukarı',
  'vlink.decrypting': 'Tarayıcınızda şifre çözülüyor… %{pct}',
  'vlink.in_browser': 'Şifre tarayıcınızda çözüldü: sunucu bu dosyanın adını ve içeriğini hiç görmedi.',
  'vlink.save': 'Kaydet',
  'vlink.untitled': 'Şifreli dosya',
  'vlink.missing': 'Bu bağlantıda anahtar yok: # işaretinden sonraki kısım eksik. Gönderenden bağlantının tamamını isteyin.',
  'vlink.incomplete': 'Bu bağlantının anahtarı eksik. Gönderenden bağlantının tamamını isteyin.',
  'vlink.integrity': 'Bu dosya doğrulanamadı: anahtar ona uymuyor ya da baytları değiştirilmiş. Hiçbir kısmı gösterilmiyor.',
  'vlink.failed': 'Dosya alınamadı: {reason}',
  'vlink.insecure': 'Bu sayfa şifreyi yalnızca güvenli bir bağlantıda (https) çözebilir. Gönderenden https bağlantısı isteyin.',
  'pin.title': 'Bu bağlantı korumalı',
  'pin.prompt': 'Size verilen PIN kodunu girin.',
  'pin.label': 'PIN',
  'pin.submit': 'Aç',
  'pin.wrong': 'Yanlış PIN. {tries_left} deneme hakkı kaldı.',
  'pin.locked': 'Çok fazla yanlış deneme. {minutes} dakika sonra tekrar deneyin.',
  'dead.title': 'Bağlantı kullanılamıyor',
  'dead.expired': 'Bu bağlantının süresi doldu.',
  'dead.title.expired': 'Bağlantının süresi doldu',
  'dead.title.revoked': 'Bağlantı iptal edildi',
  'dead.title.used_up': 'Bağlantı tükendi',
  'dead.title.used_up_drop': 'Dosya isteği doldu',
  'dead.revoked': 'Bu bağlantı iptal edildi; artık kullanılamıyor.',
  'dead.used_up': 'Bu bağlantı tükendi: izin verdiği tüm indirmeler yapıldı.',
  'dead.used_up_drop': 'Bu dosya isteği doldu: artık dosya kabul etmiyor.',
  'dead.not_found': 'Bu adreste bir şey yok. Bağlantı yanlış yazılmış ya da kaldırılmış olabilir.',
  'dead.unavailable': 'Bu bağlantının depolama alanına şu anda ulaşılamıyor. Bağlantı geçerli; daha sonra tekrar deneyin.',
  'dead.busy': 'Hizmet şu anda meşgul. Bağlantı geçerli; birazdan tekrar deneyin.',
  'dead.suspended': 'Bu bağlantı olağan dışı trafik nedeniyle geçici olarak askıya alındı. Sahibine haber verildi; yeniden etkinleştirebilir.',
  'dead.error': 'Bir şeyler ters gitti. Daha sonra tekrar deneyin.',
  'app.page_unavailable': 'Bu sayfa şu anda gösterilemiyor: hizmetin web sayfaları kurulu değil. Bağlantı geçerli; daha sonra tekrar deneyin.',
  'drop.title': 'Dosya gönder',
  'drop.intro': 'Buraya gönderdiğiniz dosyalar yalnızca bu sayfayı paylaşan kişiye gider. Başkalarının gönderdiklerini göremezsiniz.',
  'drop.name': 'Adınız (isteğe bağlı)',
  'drop.note': 'Not (isteğe bağlı)',
  'drop.files': 'Dosyalar',
  'drop.limits': 'En çok {files} dosya, her biri {size} MB.',
  'drop.allowed': 'İzin verilen türler: {ext}',
  'drop.send': 'Gönder',
  'drop.sending': 'Gönderiliyor… %{pct}',
  'drop.done': 'Teşekkürler, {n} dosya alındı.',
  'drop.failed': 'Gönderilemedi: {reason}',
  'drop.offline': 'Bağlantı koptu. Geri gelince gönderim kaldığı yerden sürer…',
  'drop.noscript': 'JavaScript olmadan her dosya en çok {size} MB olabilir ve kopan bir gönderim baştan başlar.',
  'drop.received': 'Alınanlar:',
  'drop.again': 'Başka dosya gönder',
  'drop.back': 'Forma dön',
  'mail.share.subject': '{sender} sizinle "{name}" paylaştı',
  'mail.share.body': '{sender} sizinle "{name}" paylaştı.\n\nAçmak için: {url}\n{expiry}{message}',
  'mail.drop.subject': '{sender} sizden dosya istiyor',
  'mail.drop.body': '{sender} sizden "{name}" klasörüne dosya göndermenizi istiyor.\n\nYükleme sayfası: {url}\n{expiry}{message}',
  'mail.expiry': 'Bağlantı {date} tarihine kadar geçerli.\n',
  'mail.received.subject': '"{folder}" klasörüne dosya geldi',
  'mail.received.body': '{uploader}, "{name}" dosya isteğinize {n} dosya gönderdi:\n\n{files}\n\nKlasör: {folder}',
  anon: 'Biri',
};

const catalogues: Record<string, Record<Key, string>> = { en: publicEn, tr };

export type PublicKey = Key;

/** The public-page sentence for `key` in `lang` (English when missing), with `{marks}` filled. */
export function pt(lang: Lang, key: Key, params?: Record<string, unknown>): string {
  return format(catalogues[lang]?.[key] ?? languagePacks.get(lang)?.strings.public[key] ?? publicEn[key], params);
}

/**
 * A sentence with a count, in the plural form `lang` uses for `n` (ICU rules
 * through Intl.PluralRules): `<key>.one` when the language says "one", else `<key>`.
 */
export function ptn(lang: Lang, key: 'page.items' | 'page.downloads_left', n: number): string {
  const form = new Intl.PluralRules(lang).select(n);
  return pt(lang, form === 'one' ? `${key}.one` : key, { n });
}

/** A date as visitors of `lang` read it, in the server's time zone. */
export function publicDate(lang: Lang, iso: string): string {
  return new Date(iso).toLocaleString(lang === 'en' ? 'en-GB' : lang, { dateStyle: 'medium', timeStyle: 'short' });
}
